"""Explicit registration (issue 37): a job type, a periodic task, a background loop or a
domain check exists only when its domain's ``tasks.register()`` ran, and
``commerce_api.tasks.register_all`` (called by ``create_app``) runs every domain's."""

import importlib
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest

from commerce_api import tasks
from commerce_api.jobs import registry
from tests.support import servers

PACKAGE = pathlib.Path(tasks.__file__).resolve().parent


def _domain_task_modules():
    """Every ``commerce_api/<domain>/tasks.py`` on disk, as a module name."""
    return sorted(
        "commerce_api." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for path in PACKAGE.rglob("tasks.py")
        if path.parent != PACKAGE
    )


def test_every_domain_task_module_is_registered(monkeypatch):
    called = []
    for name in _domain_task_modules():
        module = importlib.import_module(name)
        assert callable(getattr(module, "register", None)), f"{name} has no register()"
        monkeypatch.setattr(module, "register", lambda name=name: called.append(name))
    tasks.register_all({})
    assert sorted(called) == _domain_task_modules()


def test_what_a_domain_marks_is_registered_by_create_app(app):
    for name in _domain_task_modules():
        for func in registry.marked(importlib.import_module(name)):
            for add, args in func.registrations:
                if add is registry.register:
                    assert registry.get(args[0].name) == args[0], args[0].name
                elif add is registry.add_periodic:
                    assert registry.PERIODIC_TASKS[args[0]] == args[1:], args[0]
                else:
                    assert registry.BACKGROUND_LOOPS[args[0]] is args[1], args[0]


@pytest.fixture
def marked_module(monkeypatch):
    module = types.ModuleType("commerce_api_test_tasks")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(
        textwrap.dedent(
            """
            from commerce_api.jobs.registry import background_loop, job_type, periodic

            @job_type("registration_probe", scope=None, internal=True)
            def probe(job, ctx):
                return {}

            @periodic("registration_probe_tick", 60)
            def tick():
                pass

            @background_loop("registration_probe_loop")
            def loop(stop):
                pass
            """
        ),
        module.__dict__,
    )
    yield module
    registry.unregister("registration_probe")
    registry.PERIODIC_TASKS.pop("registration_probe_tick", None)
    registry.BACKGROUND_LOOPS.pop("registration_probe_loop", None)


def test_a_decorator_only_marks_registering_adds(marked_module):
    assert registry.get("registration_probe") is None
    assert "registration_probe_tick" not in registry.PERIODIC_TASKS
    assert "registration_probe_loop" not in registry.BACKGROUND_LOOPS
    registry.register_marked(marked_module)
    registry.register_marked(marked_module.__name__)  # again: changes nothing
    assert registry.get("registration_probe").run is marked_module.probe
    assert registry.PERIODIC_TASKS["registration_probe_tick"] == (60, marked_module.tick)
    assert registry.BACKGROUND_LOOPS["registration_probe_loop"] is marked_module.loop


def test_archiving_fails_closed_without_the_orders_domain(tmp_path):
    """A process that did not go through create_app refuses to archive a product that open
    orders may hold, rather than let it through unchecked."""
    code = """
        from commerce_api.products import services
        try:
            services.sku_has_open_orders("tenant", "SKU-1")
        except services.DomainNotRegistered:
            print("refused")
        else:
            print("let through")
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["refused"], result.stderr


# A worker started with one domain's register() not called (patched out before the CLI
# runs): it must refuse, naming the domain, and run nothing.
_WORKER_WITHOUT = """
import sys
from commerce_api import tasks
from commerce_api.cli import cli

for domain in tasks.DOMAINS:
    if domain.__name__ == sys.argv[1]:
        domain.register = lambda: None
cli(["worker", "--once"], prog_name="commerce-api")
"""


@pytest.mark.parametrize(
    "domain, missing",
    [
        ("commerce_api.pricing.tasks", "job type pricing_recalculate"),
        ("commerce_api.webhooks.tasks", "background loop webhook_delivery"),
        ("commerce_api.inventory.tasks", "check check_components"),
        ("commerce_api.orders.tasks", "check sku_has_open_orders"),
    ],
)
def test_the_worker_refuses_to_start_when_a_domain_did_not_register(database_url, domain, missing):
    env = servers.process_env(database_url)
    result = servers.run_cli([domain], env, program=("-c", _WORKER_WITHOUT))
    assert result.returncode == 2, result.stderr
    assert "REGISTRATION_INCOMPLETE" in result.stderr
    assert f"{domain}.register() did not register" in result.stderr
    assert missing in result.stderr


def test_the_worker_starts_when_every_domain_registered(database_url):
    env = servers.process_env(database_url)
    result = servers.run_cli(["no.such.domain"], env, program=("-c", _WORKER_WITHOUT))
    assert result.returncode == 0, result.stderr
    assert "REGISTRATION_INCOMPLETE" not in result.stderr


def test_self_check_names_an_accepted_type_without_a_handler(app):
    assert tasks.self_check() == []
    registry.declare_job_type("registration_unbuilt", params=None)
    try:
        assert tasks.self_check() == [
            "job type registration_unbuilt is accepted by the API but has no handler"
        ]
    finally:
        registry.unregister("registration_unbuilt")
