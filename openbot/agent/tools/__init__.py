"""The agent's tools, registered in one place (`openbot.agent.tools.registry`)."""
