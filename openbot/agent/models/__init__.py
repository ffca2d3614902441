"""Model backends behind one Protocol (`openbot.agent.models.base.ModelBackend`), chosen by `load_backend`."""
