"""GPUs as blocc sees them. Works without CUDA: the driver is loaded at
first use, and every query says "no GPU" where it is missing."""

from . import _blocc


def is_available():
    """True when the CUDA driver loads and sees at least one GPU."""
    return _blocc._cuda_is_available()


def unavailable_reason():
    """Why is_available() is False ('' when it is True)."""
    return _blocc._cuda_unavailable_reason()


def device_count():
    """Number of GPUs (0 without a driver)."""
    return _blocc._cuda_device_count()


def current_device():
    """The GPU this thread's work goes to."""
    return _blocc._cuda_current_device()


def set_device(ordinal):
    """Chooses the GPU for this thread's work (blocc.Error for no such GPU)."""
    _blocc._cuda_set_device(ordinal)


def get_device_name(ordinal=None):
    """'NVIDIA H100 80GB HBM3' (default: the current GPU)."""
    return _blocc._cuda_device_properties(_ordinal(ordinal))[0]


def get_device_capability(ordinal=None):
    """(major, minor): (9, 0) for an H100."""
    cc = _blocc._cuda_device_properties(_ordinal(ordinal))[1]
    return (cc // 10, cc % 10)


def get_device_properties(ordinal=None):
    """{'name', 'compute_capability': (major, minor), 'multiprocessors'}."""
    name, cc, sms = _blocc._cuda_device_properties(_ordinal(ordinal))
    return {"name": name, "compute_capability": (cc // 10, cc % 10),
            "multiprocessors": sms}


def synchronize(ordinal=None):
    """Waits for the work blocc queued on the GPU; raises blocc.Error for a
    fault of an earlier launch."""
    _blocc._cuda_synchronize(-1 if ordinal is None else ordinal)


def _ordinal(ordinal):
    return current_device() if ordinal is None else ordinal
