"""The math and evaluation pieces of a class-conditional DDPM: noise schedules, DDIM
sampling with classifier-free guidance, the Fréchet distance, and a small cached digit
classifier that scores generated samples."""

from tasks.diffusion.classifier import (
    DigitClassifier,
    TrainedClassifier,
    clear_memory_cache,
    load_classifier,
    sample_quality,
)
from tasks.diffusion.frechet import feature_stats, frechet_distance
from tasks.diffusion.sampler import ddim_sample, ddim_timesteps, guided_eps
from tasks.diffusion.schedule import SCHEDULES, NoiseSchedule, cosine_schedule, linear_schedule, noisy_mix

__all__ = [
    "DigitClassifier",
    "NoiseSchedule",
    "SCHEDULES",
    "TrainedClassifier",
    "clear_memory_cache",
    "cosine_schedule",
    "ddim_sample",
    "ddim_timesteps",
    "feature_stats",
    "frechet_distance",
    "guided_eps",
    "linear_schedule",
    "noisy_mix",
    "load_classifier",
    "sample_quality",
]
