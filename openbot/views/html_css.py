"""The HTML transcript's inline style and content security policy (no scripts, no external assets)."""

CSP = "default-src 'none'; style-src 'unsafe-inline'"
CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:1.5em;
color:#1d2330;background:#fff}
h1{font-size:1.4em;margin:.2em 0 .6em}
table.meta{border-collapse:collapse;margin-bottom:1.5em}
table.meta th{text-align:left;padding:.2em 1em .2em 0;color:#5a6270;font-weight:600;vertical-align:top}
table.meta td{padding:.2em 0}
.ev{border-left:3px solid #d0d5dd;margin:.5em 0;padding:.3em .8em}
.ts{float:right;color:#8a919c;font-size:.8em}
.label{font-weight:600;color:#5a6270;margin-right:.4em}
.message{border-color:#3b6fd4}.user_input{border-color:#8b4fc4;background:#f7f2fc}
.tool_call{border-color:#7a8799}.command{border-color:#2e8b57}.command.failed{border-color:#c0392b}
.tool_result.err,.error{border-color:#c0392b;background:#fdf0ee}
.notice,.retry{border-color:#d4a017;background:#fdf8e8}
.turn{border:0;border-top:1px dashed #d0d5dd;color:#8a919c;font-size:.85em;margin-top:1.2em}
.tokens{border-color:transparent;color:#8a919c;font-size:.8em;padding:0 .8em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:#f4f5f7;padding:.6em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
code{background:#f4f5f7;padding:0 .25em}
.badge{display:inline-block;border-radius:3px;padding:0 .4em;font-size:.85em;color:#fff;background:#2e8b57}
.badge.bad{background:#c0392b}.badge.warn{background:#b8860b}
summary{cursor:pointer;color:#5a6270}
@media (prefers-color-scheme:dark){body{background:#15181e;color:#dde1e7}pre,code{background:#232832}
.user_input{background:#231c2c}.tool_result.err,.error{background:#2c1a1a}.notice,.retry{background:#2a2515}}
"""
