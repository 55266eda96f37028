"""The rule engine and hloscope's rules."""

from __future__ import annotations

from hloscope.rules.base import Finding, InstructionRule, ModuleRule, Rule, RuleContext, Severity
from hloscope.rules.registry import load_rules, register

__all__ = ["Finding", "InstructionRule", "ModuleRule", "Rule", "RuleContext", "Severity",
           "load_rules", "register"]
