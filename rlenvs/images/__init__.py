"""Task images: a task folder's Dockerfile built into a root filesystem without Docker.

`dockerfile` reads Dockerfiles; `bases` maps base images to local roots (built from the
Debian archive with mmdebstrap where nothing can be pulled); `build` runs the steps in the
sandbox over those roots and caches each layer by content (rlenvs.sandbox.shells.rootfs runs
things on a built image).
"""
