from card_envs.revolutionary_war.env import RevolutionaryWarEnv, env, raw_env

__doc__ = RevolutionaryWarEnv.__doc__ or ""
__all__ = ["env", "raw_env"]
