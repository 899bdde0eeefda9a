from card_envs.revolution.env import RevolutionEnv, env, raw_env

__doc__ = RevolutionEnv.__doc__ or ""
__all__ = ["env", "raw_env"]
