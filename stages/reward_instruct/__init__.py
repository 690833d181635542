"""reward_instruct: A pre-trained diffusion model becomes a reward-aligned 4-step generator from the reward alone (with parameter regularisation), beating distillation + reward at equal steps.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). prepare trains a reward model, a judge and a teacher
DDPM on sklearn's 8x8 digits; train fine-tunes 4-step generators from the teacher (R0, distillation
+ reward, controls); evaluate scores them with the judge (reward, Fréchet distance) at matched steps.
"""
