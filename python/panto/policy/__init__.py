"""What panto lets a project and its tools do: folder trust
(:mod:`panto.policy.trust`), permission modes and rules, the OS sandbox.

Nothing is imported here: each module is imported where it is needed (the
trust check runs on every start-up).
"""
