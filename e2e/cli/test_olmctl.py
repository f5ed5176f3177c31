"""`olmctl` as a subprocess against the real control plane, a real catalogd process and a real
registry: catalogs added, listed, searched, shown, updated and removed, with the exit codes scripts
rely on. Run with `-s` to see every command and its output (the docs page shows such a run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from e2e.catalogd.conftest import Env, write_catalog
from e2e.clusterobjectset.conftest import absent as object_absent
from olm.api.kinds import CLUSTER_CATALOG
from olm.cli.main import EXIT_FAILED, EXIT_OK
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import push_catalog
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl


def write_demo_catalog(directory: Path, prefix: str) -> tuple[str, str]:
    """Two packages: `<prefix>-plain` (three versions, no CSV metadata) and `<prefix>-green` with
    CSV metadata, a provided API, two channels and deprecations."""
    plain, green = f"{prefix}-plain", f"{prefix}-green"
    write_catalog(directory / "plain", plain, ["1.0.0", "1.1.0", "1.2.0"])
    metadata = {
        "type": "olm.csv.metadata",
        "value": {
            "displayName": "Sleepy Workloads",
            "description": "Puts idle workloads to sleep at night.",
            "keywords": ["Sustainability"],
            "installModes": [
                {"type": "OwnNamespace", "supported": True},
                {"type": "AllNamespaces", "supported": True},
                {"type": "MultiNamespace", "supported": False},
            ],
        },
    }
    gvk = {"type": "olm.gvk", "value": {"group": "sleep.example.com", "version": "v1", "kind": "SleepInfo"}}
    documents: list[dict[str, Any]] = [{"schema": "olm.package", "name": green, "defaultChannel": "stable"}]
    for version in ("0.1.0", "0.2.0"):
        documents.append(
            {
                "schema": "olm.bundle",
                "name": f"{green}.v{version}",
                "package": green,
                "image": f"example.com/{green}-bundle:v{version}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": green, "version": version}},
                    gvk,
                    metadata,
                ],
            }
        )
    documents += [
        {
            "schema": "olm.channel",
            "name": "stable",
            "package": green,
            "entries": [
                {"name": f"{green}.v0.1.0"},
                {"name": f"{green}.v0.2.0", "replaces": f"{green}.v0.1.0"},
            ],
        },
        {
            "schema": "olm.channel",
            "name": "candidate",
            "package": green,
            "entries": [{"name": f"{green}.v0.1.0"}],
        },
        {
            "schema": "olm.deprecations",
            "package": green,
            "entries": [
                {"reference": {"schema": "olm.channel", "name": "candidate"}, "message": "use stable"},
                {
                    "reference": {"schema": "olm.bundle", "name": f"{green}.v0.1.0"},
                    "message": "upgrade to 0.2.0",
                },
            ],
        },
    ]
    (directory / "green").mkdir(parents=True)
    (directory / "green" / "catalog.json").write_text("\n".join(json.dumps(d) for d in documents) + "\n")
    return plain, green


async def test_olmctl_manages_catalogs_and_finds_their_packages(env: Env, tmp_path: Path) -> None:
    olmctl = Olmctl(env.control_plane.kubeconfig, env.control_plane.ca_file)
    name, prefix = unique("cli"), unique("cli")
    plain, green = write_demo_catalog(tmp_path / "catalog", prefix)
    image = f"{env.registry.host}/{unique('e2e/cli')}:v1"
    push_catalog(env.pusher, tmp_path / "catalog", image)

    added = await olmctl("catalog", "add", name, image, "--poll-interval", "5", "--priority", "2")
    env.catalogs.created.append(name)  # deleted and waited for at teardown whatever happens below
    assert (added.code, added.out, added.err) == (EXIT_OK, f"clustercatalog/{name} created\n", "")
    stored = await env.kube.get(CLUSTER_CATALOG, name)
    assert stored["spec"]["source"] == {"type": "Image", "image": {"ref": image, "pollIntervalMinutes": 5}}
    assert stored["spec"]["priority"] == 2

    duplicate = await olmctl("catalog", "add", name, image)
    assert (duplicate.code, duplicate.err) == (
        EXIT_FAILED,
        f'error: clustercatalog "{name}" already exists\n',
    )

    row: dict[str, Any] = {}

    async def serving_with_both_packages() -> bool:
        nonlocal row
        listed = await olmctl("catalog", "list", "-o", "json")
        assert listed.code == EXIT_OK, listed.err
        row = next((r for r in listed.json() if r["name"] == name), {})
        return bool(row.get("serving")) and row.get("packages") == 2

    await eventually(
        serving_with_both_packages, what=f"olmctl to list {name} as serving 2 packages", timeout=60
    )
    assert row["image"] == image
    assert row["priority"] == 2
    assert row["url"] == f"{env.catalogd.catalogs_url}/{name}"
    assert row["lastUnpacked"].endswith("Z")

    table = await olmctl("catalog", "list")
    assert table.code == EXIT_OK
    assert table.out.splitlines()[0].split() == ["NAME", "SERVING", "LAST", "UNPACKED", "PACKAGES"]
    line = next(line.split() for line in table.out.splitlines() if line.startswith(name + " "))
    assert line == [name, "true", row["lastUnpacked"], "2"]

    # search: name, display name and keyword, case-insensitively; other catalogs may be listed too
    for text in (prefix.upper(), "sleepy workloads", "sustainability"):
        found = await olmctl("search", text, "--catalog", name, "-o", "json")
        assert found.code == EXIT_OK, found.err
        packages = {(r["catalog"], r["package"]) for r in found.json()}
        expected = {(name, plain), (name, green)} if text == prefix.upper() else {(name, green)}
        assert packages == expected, text
    searched = await olmctl("search", "sleepy", "--catalog", name)
    assert searched.out.splitlines() == [
        "CATALOG"
        + " " * (len(name) - 4)
        + "PACKAGE"
        + " " * (len(green) - 4)
        + "DEFAULT CHANNEL   LATEST VERSION   DISPLAY NAME",
        f"{name}   {green}   stable            0.2.0            Sleepy Workloads",
    ]
    everywhere = await olmctl("search", "sustainability")  # every serving catalog
    assert everywhere.code == EXIT_OK, everywhere.err
    assert [name, green, "stable", "0.2.0", "Sleepy", "Workloads"] in [
        line.split() for line in everywhere.out.splitlines()
    ]
    nothing = await olmctl("search", "no-package-says-this", "--catalog", name)
    assert (nothing.code, nothing.out) == (EXIT_OK, "")
    assert "No package matches" in nothing.err

    shown = await olmctl("package", "show", green, "--catalog", name, "-o", "yaml")
    assert shown.code == EXIT_OK, shown.err
    [summary] = yaml.safe_load(shown.out)
    assert summary["defaultChannel"] == "stable"
    assert summary["latestVersion"] == "0.2.0"
    assert summary["displayName"] == "Sleepy Workloads"
    assert summary["channels"] == [
        {
            "name": "candidate",
            "versions": ["0.1.0"],
            "deprecated": "use stable",
            "deprecatedVersions": ["0.1.0"],
        },
        {"name": "stable", "versions": ["0.2.0", "0.1.0"], "deprecated": "", "deprecatedVersions": ["0.1.0"]},
    ]
    assert summary["deprecatedBundles"] == {f"{green}.v0.1.0": "upgrade to 0.2.0"}
    assert summary["installModes"] == [
        {"type": "OwnNamespace", "supported": True},
        {"type": "AllNamespaces", "supported": True},
        {"type": "MultiNamespace", "supported": False},
    ]
    assert summary["providedAPIs"] == [{"group": "sleep.example.com", "version": "v1", "kind": "SleepInfo"}]
    shown_text = await olmctl("package", "show", green, "--catalog", name)
    assert "Install modes:   OwnNamespace, AllNamespaces" in shown_text.out.splitlines()
    assert "  candidate (deprecated)   0.1.0 (deprecated)" in shown_text.out.splitlines()

    versions = await olmctl(
        "package", "versions", plain, "--channel", "stable", "--catalog", name, "-o", "json"
    )
    assert versions.code == EXIT_OK, versions.err
    assert [(r["version"], r["replaces"]) for r in versions.json()] == [
        ("1.2.0", f"{plain}.v1.1.0"),
        ("1.1.0", f"{plain}.v1.0.0"),
        ("1.0.0", ""),
    ]
    default_channel = await olmctl("package", "versions", plain, "--catalog", name)
    assert default_channel.code == EXIT_OK, default_channel.err
    assert [line.split()[:3] for line in default_channel.out.splitlines()] == [
        ["CATALOG", "VERSION", "BUNDLE"],
        [name, "1.2.0", f"{plain}.v1.2.0"],
        [name, "1.1.0", f"{plain}.v1.1.0"],
        [name, "1.0.0", f"{plain}.v1.0.0"],
    ]
    no_channel = await olmctl("package", "versions", plain, "--channel", "fast", "--catalog", name)
    assert no_channel.code == EXIT_FAILED
    assert no_channel.err == (
        f"error: catalog {name!r} has no channel 'fast' of {plain!r} (channels: stable)\n"
    )

    missing = await olmctl("package", "show", f"{prefix}-absent", "--catalog", name)
    assert (missing.code, missing.out) == (EXIT_FAILED, "")
    assert missing.err == f"error: package '{prefix}-absent' not found in catalog {name!r}\n"

    updated = await olmctl("catalog", "update", name, "--priority", "7", "--poll-interval", "3")
    assert (updated.code, updated.out) == (EXIT_OK, f"clustercatalog/{name} updated\n")
    stored = await env.kube.get(CLUSTER_CATALOG, name)
    assert stored["spec"]["priority"] == 7
    assert stored["spec"]["source"]["image"] == {"ref": image, "pollIntervalMinutes": 3}

    removed = await olmctl("catalog", "remove", name)
    assert (removed.code, removed.out) == (EXIT_OK, f"clustercatalog/{name} deleted\n")

    await eventually(
        object_absent(env.kube, CLUSTER_CATALOG, name), what=f"{name} to be finalized and deleted", timeout=30
    )
    for argv in (("catalog", "remove", name), ("catalog", "update", name, "--priority", "1")):
        again = await olmctl(*argv)
        assert (again.code, again.out, again.err) == (
            EXIT_FAILED,
            "",
            f'error: clustercatalog "{name}" not found\n',
        )
    absent = await olmctl("package", "show", plain, "--catalog", name)
    assert (absent.code, absent.err) == (EXIT_FAILED, f'error: clustercatalog "{name}" not found\n')
