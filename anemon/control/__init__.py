"""Run control: plans, the controller state machine, arm runs, cooldowns, watchdogs, clocks."""
