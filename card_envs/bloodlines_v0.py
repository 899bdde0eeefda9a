from card_envs.bloodlines.env import BloodlinesEnv, env, raw_env

__doc__ = BloodlinesEnv.__doc__ or ""
__all__ = ["env", "raw_env"]
