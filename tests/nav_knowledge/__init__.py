"""Tests of the nav_knowledge study."""
