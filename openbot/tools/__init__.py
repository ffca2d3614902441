"""The agent's tools, registered in one place (`openbot.tools.registry`)."""
