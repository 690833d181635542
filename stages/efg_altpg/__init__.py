"""efg_altpg: regularized alternating policy gradient in zero-sum extensive-form games
(Kalogiannis & Farina, NeurIPS 2025) on the sequence form of OpenSpiel's Kuhn and Leduc poker
and of small random EFGs, with OpenSpiel's CFR+ as the reference."""
