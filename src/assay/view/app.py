"""The server: a read-only Starlette app (GET and HEAD only), every body scrubbed before it is sent."""

from __future__ import annotations

import mimetypes
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from assay._util import Scrubber
from assay.errors import ConfigError, MissingDependencyError

from ._site import NotFound, Site

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def make_app(site: Site, scrubber: Scrubber | None = None) -> Starlette:
    """The ASGI app serving ``site``'s pages at the paths the bundle writes them to."""
    try:
        from starlette.applications import Starlette
        from starlette.responses import PlainTextResponse, RedirectResponse, Response
        from starlette.routing import Route
    except ImportError as exc:  # pragma: no cover - the extra is part of the test install
        raise MissingDependencyError(
            "assay view needs starlette and uvicorn: pip install 'assay[view]'"
        ) from exc

    scrub = scrubber or Scrubber()

    def html(render: Callable[[Request], str]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                body = render(request)
            except NotFound:
                return PlainTextResponse("not found", status_code=404)
            return Response(scrub.scrub_text(body), media_type="text/html; charset=utf-8")

        return endpoint

    def p(request: Request, name: str) -> str:
        return str(request.path_params[name])

    def page_no(request: Request) -> int:
        try:
            return int(p(request, "n"))
        except ValueError:
            raise NotFound(p(request, "n")) from None

    async def compare_form(request: Request) -> Response:
        base, cur = request.query_params.get("base"), request.query_params.get("cur")
        if base and cur:
            return RedirectResponse(
                f"compare/{quote(base, safe='~')}/{quote(cur, safe='~')}.html", status_code=303
            )
        return await html(lambda r: site.compare_index())(request)

    async def run_file(request: Request) -> Response:
        try:
            path = site.file(p(request, "key"), p(request, "name"))
        except NotFound:
            return PlainTextResponse("not found", status_code=404)
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        data = path.read_bytes()
        if kind.startswith("text/"):
            data = scrub.scrub_text(data.decode("utf-8", errors="replace")).encode("utf-8")
        return Response(data, media_type=kind)

    async def static(request: Request) -> Response:
        name = p(request, "name")
        try:
            data = site.static(name)
        except NotFound:
            return PlainTextResponse("not found", status_code=404)
        return Response(data, media_type=mimetypes.guess_type(name)[0] or "text/plain")

    get = ["GET", "HEAD"]
    routes = [
        Route("/", html(lambda r: site.index()), methods=get),
        Route("/index.html", html(lambda r: site.index()), methods=get),
        Route(
            "/runs/{key}/index.html",
            html(lambda r: site.run_page(p(r, "key"), 1, r.query_params, served=True)),
            methods=get,
        ),
        Route(
            "/runs/{key}/page-{n}.html",
            html(lambda r: site.run_page(p(r, "key"), page_no(r), r.query_params, served=True)),
            methods=get,
        ),
        Route(
            "/runs/{key}/case/{slug}.html",
            html(lambda r: site.case_page(p(r, "key"), p(r, "slug"))),
            methods=get,
        ),
        Route("/runs/{key}/files/{name}", run_file, methods=get),
        Route("/compare.html", compare_form, methods=get),
        Route(
            "/compare/{base}/{cur}.html",
            html(lambda r: site.compare_page(p(r, "base"), p(r, "cur"))),
            methods=get,
        ),
        Route("/trends.html", html(lambda r: site.trends_index()), methods=get),
        Route(
            "/trends/{benchmark}/{suite}.html",
            html(lambda r: site.trends_page(p(r, "benchmark"), p(r, "suite"))),
            methods=get,
        ),
        Route("/static/{name}", static, methods=get),
    ]
    return Starlette(routes=routes)


def serve(site: Site, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the viewer until Ctrl-C. A host other than loopback must be asked for by name."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(
            "assay view needs starlette and uvicorn: pip install 'assay[view]'"
        ) from exc
    if not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is out of range 0-65535", path="--port")
    app = make_app(site)
    uvicorn.run(app, host=host, port=port, log_level="warning")
