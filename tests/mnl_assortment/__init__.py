"""Tests of the mnl_assortment study."""
