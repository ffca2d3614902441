"""Model backends behind one Protocol (`agent.models.base.ModelBackend`), chosen by `registry.load_backend`
from a name `openbot.config.model_names` parsed; one subpackage per provider (`anthropic/`, `openai/`)."""
