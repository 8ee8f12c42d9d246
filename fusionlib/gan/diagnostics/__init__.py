"""Gradient diagnostics of a critic: per-pair gradient variance (PTGAN SM D.1) and its fast path."""

from fusionlib.gan.diagnostics.variance import (
    critic_gradient_variance,
    critic_gradient_variances,
    last_layer_parameter_names,
    minibatch_gradient_variance,
    per_sample_gradients,
    trace_covariance,
    trace_with_error,
)

__all__ = [
    "critic_gradient_variance", "critic_gradient_variances", "last_layer_parameter_names",
    "minibatch_gradient_variance", "per_sample_gradients", "trace_covariance",
    "trace_with_error",
]
