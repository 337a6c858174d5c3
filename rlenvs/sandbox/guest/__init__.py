"""Code that runs inside the sandbox (the zygote and its children). Standard library only:
the guest interpreter is the system's Python, with none of rlenvs' dependencies. The host
never imports these modules as a package (but for `shell` and `protocol`, constants that
import nothing of rlenvs); `launch` copies this folder into the sandbox."""
