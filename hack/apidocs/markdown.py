"""One reference page per CRD: what the resource is, its `kubectl get` columns, then a section per
object of its schema with a table of that object's fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hack.apidocs.inline import block, cell, code
from hack.apidocs.schema import Field, FieldType, Section, anchor, sections

__all__ = ["CRDError", "page_name", "render_page"]

JSON = Mapping[str, Any]

# The API server describes metadata itself, so CRDs carry no description for it.
_DESCRIPTIONS = {
    "metadata": "Standard object metadata: name, labels, annotations, finalizers, owner references.",
}
_FIELD_HEADER = ["Field", "Type", "Description and validation"]


class CRDError(ValueError):
    """The document is not a CustomResourceDefinition this generator can describe."""


def _version(crd: JSON) -> JSON:
    if crd.get("kind") != "CustomResourceDefinition":
        raise CRDError(f"not a CustomResourceDefinition: kind {crd.get('kind')!r}")
    versions = crd["spec"]["versions"]
    stored = [v for v in versions if v.get("storage")]
    if len(stored) != 1:
        raise CRDError(f"{crd['metadata']['name']}: expected exactly one stored version, found {len(stored)}")
    version: JSON = stored[0]
    # One page documents one schema: versions that differ would need their own layout (and anchors).
    if any(v["schema"] != version["schema"] for v in versions):
        raise CRDError(f"{crd['metadata']['name']}: its versions have different schemas")
    return version


def page_name(crd: JSON) -> str:
    """The page's file name, after the plural; raises CRDError for what this generator cannot describe."""
    _version(crd)
    return f"{crd['spec']['names']['plural']}.md"


def _type(kind: FieldType) -> str:
    if kind.section is None:
        return kind.prefix + kind.base
    return f"{kind.prefix}[{kind.base}](#{anchor(kind.section)})"


def _row(field: Field) -> list[str]:
    # The class (attr_list) keeps the name on one line; see docs/stylesheets/reference.css.
    name = code(field.name) + "{ .field-name }" + ("<br>*required*" if field.required else "")
    kind = _type(field.type) + (f"<br>default {field.default}" if field.default else "")
    return [name, kind, cell(field.description) + _bullets(field.constraints)]


def _bullets(phrases: tuple[str, ...]) -> str:
    """A list inside a table cell, where Markdown list syntax cannot go."""
    if not phrases:
        return ""
    return "<ul>" + "".join(f"<li>{phrase}</li>" for phrase in phrases) + "</ul>"


def _section(section: Section) -> str:
    depth = "##" if section.path.count(".") == 0 and "[]" not in section.path else "###"
    title = code(section.path) if section.path else "Top-level fields"
    parts = [f"{depth} {title} {{ #{anchor(section.path)} }}"]
    if section.path and section.description:
        parts.append(block(section.description))
    if section.constraints:
        parts.append("Validation:\n\n" + "\n".join(f"- {phrase}" for phrase in section.constraints))
    parts.append(_table(_FIELD_HEADER, [_row(f) for f in section.fields]))
    return "\n\n".join(parts)


def _summary(crd: JSON, version: JSON) -> str:
    spec, names = crd["spec"], crd["spec"]["names"]
    items = [
        ("API version", code(f"{spec['group']}/{version['name']}")),
        ("Kind", f"{code(names['kind'])} (list: {code(names.get('listKind', names['kind'] + 'List'))})"),
        ("Scope", "cluster-scoped" if spec["scope"] == "Cluster" else "namespaced"),
        ("Plural", code(names["plural"])),
        ("Singular", code(names.get("singular", names["kind"].lower()))),
    ]
    if names.get("shortNames"):
        items.append(("Short names", ", ".join(code(n) for n in names["shortNames"])))
    if names.get("categories"):
        items.append(("Categories", ", ".join(code(c) for c in names["categories"])))
    also = [v["name"] for v in spec["versions"] if v is not version and v.get("served")]
    if also:
        served = ", ".join(code(f"{spec['group']}/{v}") for v in also)
        items.append(("Also served as", f"{served} (same schema)"))
    if version.get("subresources"):
        items.append(("Subresources", ", ".join(code(s) for s in sorted(version["subresources"]))))
    return "\n".join(f"- **{label}**: {text}" for label, text in items)


def _columns(crd: JSON, version: JSON) -> str | None:
    columns = version.get("additionalPrinterColumns") or ()
    if not columns:
        return None
    described = any(c.get("description") for c in columns)
    header = ["Column", "Type", "JSON path"] + (["Description"] if described else [])
    rows = [
        [cell(c["name"]), c["type"], code(c["jsonPath"])]
        + ([cell(c.get("description", ""))] if described else [])
        for c in columns
    ]
    return (
        f"## Printer columns\n\n{code('kubectl get ' + crd['spec']['names']['plural'])} shows:\n\n"
        + _table(header, rows)
    )


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def render_page(crd: JSON, *, source: str, guide: str | None = None) -> str:
    """The page for `crd`, read from the file `source` (named in the header); `guide` is the
    relative link to the hand-written page about the same kind, if there is one."""
    version = _version(crd)
    schema: JSON = version["schema"]["openAPIV3Schema"]
    kind = crd["spec"]["names"]["kind"]
    # The title comes first: MkDocs names a page in the navigation after a leading heading only.
    parts = [
        f"# {kind} field reference",
        f"<!-- Code generated by `python -m hack.apidocs` from {source}. DO NOT EDIT. -->\n"
        "<!-- Regenerate with `make manifests`. -->",
    ]
    if schema.get("description"):
        parts.append(block(schema["description"]))
    intro = "Every field the API server accepts, with the validation it applies."
    if guide:
        intro += f" For what the fields are for and examples, see the [{kind} guide]({guide})."
    parts.append(intro)
    parts.append(_summary(crd, version))
    columns = _columns(crd, version)
    if columns:
        parts.append(columns)
    parts.extend(_section(s) for s in sections(schema, descriptions=_DESCRIPTIONS))
    return "\n\n".join(parts) + "\n"
