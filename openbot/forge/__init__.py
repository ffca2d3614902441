"""Reading the forge (GitHub's REST API) for the nightly loop: a bot's open pull request, its failed checks
and the review feedback of people with write access, written as a feedback file (docs/FEEDBACK.md).

api.py is the client (the token goes to the API's own address only), gather.py what is gathered and the
rule it keeps; `openbot feedback gather` (cli/feedback_cmd.py) runs gather.py as the gate's `forge.read`
child, the only process that gets the forge's token."""
