"""FusionGAN (seed 000)."""
