"""OpenAI-SDK models: backend.py (calls, patience), responses.py and chat.py (one streamed call per
protocol), convert.py (the Anthropic-shaped conversation translated), errors.py, endpoint.py (server, key,
window, prices), catalog.py (the server's model listing)."""
