"""Model backends behind one Protocol (`openbot.models.base.ModelBackend`), chosen by `load_backend`."""
