"""Code that runs inside the sandbox (the zygote and its children). Standard library only:
the guest interpreter is the system's Python, with none of rlenvs' dependencies. The host
never imports these modules as a package (but for `shell`, constants that import nothing);
`launch` copies this folder into the sandbox."""
