from card_envs.battlecards.env import BattlecardsEnv, env, raw_env

__doc__ = BattlecardsEnv.__doc__ or ""
__all__ = ["env", "raw_env"]
