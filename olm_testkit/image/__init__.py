"""The OLM image, built here without Docker and pushed with `olm_testkit.images.registry`.

One image runs both processes (`catalogd`, `operator-controller`: console scripts of the `olm-py`
distribution). It has three gzip-compressed, reproducible layers, each cached under
`~/.cache/olm-py/image/` so that a code change rebuilds and pushes only the last, small one:

1. `base` (`olm_testkit.image.base`): Debian bookworm's Essential set, Debian's Python 3.11 and the CA
   certificates, installed by mmdebstrap from the host's apt sources; keyed by suite, packages and
   apt sources.
2. `deps` (`olm_testkit.image.venv`): the runtime dependencies locked in `uv.lock` (no dev or bench group),
   installed into the virtualenv `/opt/olm` by the image's own Python; keyed by `uv.lock`.
3. `app`: the wheels of olm-py and olm-runtime installed into the same virtualenv; keyed by both.

The config runs `operator-controller` as 65532:65532 with `/opt/olm/bin` first on PATH. The front
door is `olm_testkit.image.build` (`build`, `build_and_push`, `base_image`); `python -m hack.image` is its
command line. docs/dev/image.md has the figures and the Containerfile route.
"""
