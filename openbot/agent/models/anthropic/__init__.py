"""Claude on the Messages API: backend.py (calls, patience, stop reasons), http.py (the wire, on httpx2),
wire.py (the stream folded into a reply)."""
