"""Regenerate ``jinja.jsonl``: the ``jinja`` suite's queries about real changes between Jinja2 releases.

Built the way ``make_pr_queries.py`` builds click's: each query is an issue written for this suite about
one change listed in Jinja2's CHANGES.rst for 3.1.3 to 3.1.6 (the pull request or advisory it names);
its ``patch`` is the real diff of that change between two releases, cut down to the hunks that make it
(``git diff -U2`` hunk numbers below). Run once the jinja repository exists in the repo cache:

    python eval/code_retrieval/make_jinja_queries.py $ASSAY_HOME/repos/pypi-sdist__jinja2.git
"""

from __future__ import annotations

import sys
from pathlib import Path

from make_pr_queries import Spec, write_queries

HERE = Path(__file__).resolve().parent
J = "src/jinja2/"

QUERIES: Spec = [
    (
        "jinja-3.1.3-required-block-check",
        "v3.1.2",
        "v3.1.3",
        {J + "parser.py": [0]},
        "A parent template declares {% block content required %}{% if x %}{% endif %}{% endblock %}. "
        "Instead of the TemplateSyntaxError 'Required blocks can only contain comments or whitespace', "
        "compiling it crashes with AttributeError: 'If' object has no attribute 'nodes'. The check "
        "that a required block is empty assumes every body node is output.",
    ),
    (
        "jinja-3.1.3-xmlattr-space-keys",
        "v3.1.2",
        "v3.1.3",
        {J + "filters.py": [0, 1, 2]},
        "The xmlattr filter escapes values but not keys: {{ {'onclick=alert(1) x': 'y'}|xmlattr }} "
        "renders a second attribute, so keys that come from user input can inject attributes (XSS). "
        "A key containing a space should be rejected with a ValueError.",
    ),
    (
        "jinja-3.1.3-trans-nesting-error",
        "v3.1.2",
        "v3.1.3",
        {J + "ext.py": [2, 3]},
        "When I accidentally write {% trans %} inside another {% trans %} block (I meant endtrans), the "
        "i18n extension only says 'control structures in translatable sections are not allowed'. The "
        "error should say trans blocks can't be nested and name the tag it found.",
    ),
    (
        "jinja-3.1.4-xmlattr-key-chars",
        "v3.1.3",
        "v3.1.4",
        {J + "filters.py": [4, 7]},
        "The fix for spaces in xmlattr keys is incomplete: a key containing '/', '>' or '=' still moves "
        "the HTML parser out of the attribute name, e.g. {'a/onmouseover=alert(1)': ''}|xmlattr. Any "
        "character that ends an attribute name should raise ValueError.",
    ),
    (
        "jinja-3.1.5-sandbox-indirect-format",
        "v3.1.4",
        "v3.1.5",
        {J + "sandbox.py": [2, 3, 4, 5, 6]},
        "The SandboxedEnvironment only checks str.format when the template calls it directly. Storing "
        "the bound method and calling it later, e.g. {% set f = '{0.__class__}'.format %} passed to a "
        "filter that calls its argument, runs an unchecked format and leaks attributes. Getting the "
        "format or format_map attribute of a string should give a safe wrapper.",
    ),
    (
        "jinja-3.1.5-template-name-fstring",
        "v3.1.4",
        "v3.1.5",
        {J + "compiler.py": [10]},
        "A template whose file name contains curly braces, like 'page{x}.html', fails with a NameError "
        "instead of the expected error when it does {% from 'macros.html' import missing %}: the "
        "position with the template name is pasted into generated f-string code without escaping.",
    ),
    (
        "jinja-3.1.5-sandbox-list-clear-pop",
        "v3.1.4",
        "v3.1.5",
        {J + "sandbox.py": [1]},
        "ImmutableSandboxedEnvironment blocks list.append and list.sort but a template can still call "
        "items.clear() and items.pop() on a list passed in the context and modify it. Those mutating "
        "methods should be unsafe too.",
    ),
    (
        "jinja-3.1.5-sync-render-asyncio-run",
        "v3.1.4",
        "v3.1.5",
        {J + "environment.py": [5]},
        "Calling template.render() on an environment created with enable_async=True creates a new event "
        "loop by hand and runs it with run_until_complete, which leaks the loop and warns on recent "
        "Python. The sync render of an async template should just use asyncio.run.",
    ),
    (
        "jinja-3.1.5-generate-async-aclose",
        "v3.1.4",
        "v3.1.5",
        {J + "environment.py": [6, 7], J + "async_utils.py": [1]},
        "Template.generate_async returns a plain async iterator that cannot be closed, and if I stop "
        "consuming it early Python warns that the root render function and auto_aiter were never "
        "closed (RuntimeWarning: coroutine/async generator ignored GeneratorExit). It should return "
        "an aclose-able async generator and close what it iterates.",
    ),
    (
        "jinja-3.1.5-async-blocks-unclosed",
        "v3.1.4",
        "v3.1.5",
        {J + "compiler.py": [5, 6, 7, 8, 9]},
        "With enable_async, templates that use {% extends %}, {% block %} or {% include %} leave async "
        "generators unclosed when rendering stops early, and asyncio prints 'an error occurred during "
        "closing of asynchronous generator'. The code generated for blocks, includes and extends "
        "should close the generator in a finally clause.",
    ),
    (
        "jinja-3.1.5-block-reference-concat",
        "v3.1.4",
        "v3.1.5",
        {J + "runtime.py": [1, 2]},
        "In a NativeEnvironment, {{ self.number() }} or {{ super() }} returns the block's output as a "
        "string even when it renders a single integer, while the template itself returns native types. "
        "Calling a block reference should use the environment's concat function, not the default one.",
    ),
    (
        "jinja-3.1.5-unique-async",
        "v3.1.4",
        "v3.1.5",
        {J + "filters.py": [0, 1]},
        "In an async environment, {{ users|map(attribute='name')|unique|list }} fails with TypeError: "
        "'async_generator' object is not iterable, because the unique filter is not async-aware like map "
        "and select are.",
    ),
    (
        "jinja-3.1.5-int-overflow",
        "v3.1.4",
        "v3.1.5",
        {J + "filters.py": [2]},
        "{{ '1e1000'|int }} raises OverflowError: cannot convert float infinity to integer and the page "
        "fails to render. The int filter should return its default for values in scientific notation "
        "that overflow, as it does for other values it cannot convert.",
    ),
    (
        "jinja-3.1.5-deterministic-set-tuple",
        "v3.1.4",
        "v3.1.5",
        {J + "compiler.py": [3, 4]},
        "Compiling the same template twice gives different Python source when it has "
        "{% set a, b = 1, 2 %}: the assigned names are emitted in set order, which changes with hash "
        "randomisation, so compiled templates and bytecode caches are not reproducible.",
    ),
    (
        "jinja-3.1.5-undefined-dunder-protocols",
        "v3.1.4",
        "v3.1.5",
        {J + "runtime.py": [4, 5]},
        "copy.copy(ChainableUndefined()) and pickling an Undefined fail in strange ways: looking up "
        "__setstate__ or __reduce_ex__ on it returns another undefined object instead of raising "
        "AttributeError, so Python's protocol probing thinks the method exists.",
    ),
    (
        "jinja-3.1.5-overlay-enable-async",
        "v3.1.4",
        "v3.1.5",
        {J + "environment.py": [1, 2]},
        "env.overlay(enable_async=True) returns an environment that still renders synchronously, and "
        "overlaying an async environment without passing enable_async turns async off, because the "
        "argument defaults to False instead of meaning 'not given'.",
    ),
    (
        "jinja-3.1.5-filesystem-loader-paths",
        "v3.1.4",
        "v3.1.5",
        {J + "loaders.py": [0]},
        "TemplateNotFound from FileSystemLoader only says 'index.html', so when my searchpath is wrong I "
        "cannot tell where it looked. The error message should list the search paths it tried.",
    ),
    (
        "jinja-3.1.5-package-loader-no-templates",
        "v3.1.4",
        "v3.1.5",
        {J + "loaders.py": [3, 4]},
        "PackageLoader('myapp') for a package that has no 'templates' directory fails with a confusing "
        "error about the package not being installed in a way PackageLoader understands, or later with "
        "TemplateNotFound. It should say the directory is missing from the package.",
    ),
    (
        "jinja-3.1.5-urlize-mailto",
        "v3.1.4",
        "v3.1.5",
        {J + "utils.py": [1]},
        "The urlize filter turns text like '@a@b' or a social media handle '@user@host' into a mailto: "
        "link. Only things that look like an email address should get mailto.",
    ),
    (
        "jinja-3.1.5-select-pass-context-test",
        "v3.1.4",
        "v3.1.5",
        {J + "filters.py": [6]},
        "A custom test decorated with @pass_context works in {% if x is mytest %} but fails with "
        "TypeError: missing 1 required positional argument when used as users|select('mytest'), "
        "because select and reject call the test without the context.",
    ),
    (
        "jinja-3.1.5-namespace-tuple-assign",
        "v3.1.4",
        "v3.1.5",
        {J + "parser.py": [1, 2, 3, 4, 5, 6], J + "compiler.py": [11, 12]},
        "{% set ns.a, ns.b = 1, 2 %} with ns = namespace() fails with a TemplateSyntaxError, although "
        "{% set ns.a = 1 %} works. Namespace attribute references should be allowed in tuple "
        "assignment targets of set and for.",
    ),
    (
        "jinja-3.1.5-set-all-branches",
        "v3.1.4",
        "v3.1.5",
        {J + "idtracking.py": [2, 3]},
        "If a variable is assigned with {% set %} in every branch of {% if %}{% elif %}{% else %}, it is "
        "treated as initially undefined, and reading an outer value of the same name before the if "
        "gives an undefined value. The symbol tracking of branches counts stores wrongly.",
    ),
    (
        "jinja-3.1.6-attr-filter-sandbox",
        "v3.1.5",
        "v3.1.6",
        {J + "filters.py": [0, 1]},
        "In the sandbox, {{ ''|attr('format') }} gets the real str.format because the attr filter calls "
        "getattr directly instead of the environment's getattr, so the sandbox's checks on attribute "
        "lookup never run and the format escape is back.",
    ),
]


if __name__ == "__main__":
    write_queries(sys.argv[1], "pypi-sdist/jinja2", QUERIES, HERE / "jinja.jsonl")
