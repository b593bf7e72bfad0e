"""The specs table: one record per release program, from the release, our registry and the classification."""
from __future__ import annotations


from .release import folder_meta, list_programs, load_prompts, read_blobs, SUBCAT_TO_FAMILY, uid_index
from .registry import our_families, registry_validator
from .samplers import num
from .equivalences import scipy_spec, tidy_params, to_intended
from .program import analyze_program
from .realworld import realworld_answer_types, RW_DESCRIPTION, RW_MANUAL


def _provenance(uid, folder, uidmap, prompts) -> dict:
    """Where a uid comes from: its folder and row, category, regime, and the family its generation prompt named."""
    src_folder, index = uidmap.get(uid, (None, None))
    cat_folder = src_folder or folder
    category, regime = folder_meta(cat_folder)
    rec = {"uid": uid, "task_folder": folder, "uid_folder": src_folder, "question_index": index,
           "category": category, "regime": regime}
    if src_folder and src_folder != folder:
        rec["misfiled"] = (f"program stored under {folder} but its uid is {src_folder}/questions.json:{index}; "
                           f"category taken from {src_folder}")
    pr = prompts.get(src_folder) if src_folder else None
    if pr and index is not None and index < len(pr):
        sub = pr[index]["subcategory"].replace(" Distribution", "")
        rec["intended_subcategory"] = sub
        rec["intended_group"] = pr[index]["category"]
        rec["intended_family"] = SUBCAT_TO_FAMILY.get(sub)
    else:
        rec["intended_subcategory"] = rec["intended_family"] = None
    return rec


def _realworld_classification(rec, cls, rw_types) -> dict:
    """A real-world record's description and answer type; a hand-derived law replaces the AST one where we have it
    (the AST result is kept beside it)."""
    uid = rec["uid"]
    rec["realworld"] = {"simulates": RW_DESCRIPTION.get(uid[:8]), **rw_types.get(uid, {})}
    if uid[:8] in RW_MANUAL:
        if cls["status"] == "unclassifiable":
            rec["ast_reason"] = cls["reason"]
        else:
            rec["ast_law"] = {"family": cls["law"].family, "params": num(cls["law"].params)}
        cls = {"status": "classified", "law": RW_MANUAL[uid[:8]](), "derivation": "manual"}
    return cls


def _in_intended_family(rec, fam, params):
    """Set ``family`` and ``params``: the law re-expressed in the prompt's intended family where it is exactly a
    member of it, mixture components one by one (a note says so); returns the family a mismatch is checked against."""
    target = rec.get("intended_family")
    if fam == "mixture":
        comps = []
        for comp in params["components"]:
            cconv = to_intended(comp["family"], comp["params"], target)
            if cconv is not None:
                comps.append({"family": target, "params": tidy_params(target, cconv), "weight": comp["weight"]})
            else:
                comps.append(comp)
        if comps != params["components"]:
            rec.setdefault("notes", []).append(f"mixture components re-expressed as the intended family {target}")
        params = {"components": comps}
        target = None
    conv = to_intended(fam, params, target)
    if conv is not None:
        rec["family"], rec["params"] = target, tidy_params(target, conv)
        rec.setdefault("notes", []).append(f"{fam} re-expressed as the intended family {target} (same law)")
    else:
        rec["family"], rec["params"] = fam, params
    return target


def _classified_fields(rec, L, ours, validate) -> None:
    """The fields of a classified record: family and params in our terms, pattern, scipy spec, notes, status
    (``classified_missing_family`` where our registry lacks a family) and the registry's validation."""
    fam, params = L.family, tidy_params(L.family, L.params)
    rec["natural_family"], rec["natural_params"] = fam, params
    target = _in_intended_family(rec, fam, params)
    rec["pattern"] = L.pattern
    sps = scipy_spec(rec["family"], rec["params"])
    if sps is not None:
        rec["scipy"] = sps
    rec["notes"] = rec.get("notes", []) + L.notes
    if L.extra:
        rec["extra"] = num(L.extra)
    fams = [c["family"] for c in rec["params"]["components"]] if rec["family"] == "mixture" else [rec["family"]]
    missing = sorted({f for f in fams if f not in ours})
    rec["status"] = "classified_missing_family" if missing else "classified"
    if missing:
        rec["missing_families"] = missing
    if validate and not missing:
        rec["registry_validation"] = validate(rec["family"], rec["params"])
    if rec["family"] == "mixture":
        rec["components_summary"] = [f"{c['family']}@{c['weight']}" for c in rec["params"]["components"]]
    if target and rec["family"] != target and not (rec["family"] == "mixture"):
        rec["intended_mismatch"] = f"prompt asked for {target}, program samples {rec['family']}"


def build_specs():
    """One record per release program (sorted by path), and our registry's family names."""
    programs = list_programs()
    sources = read_blobs(programs)
    folders = sorted({p.split("/")[1] for p in programs})
    uidmap = uid_index(folders)
    prompts = {f: load_prompts(f) for f in folders}
    ours = our_families()
    validate = registry_validator()
    rw_types = realworld_answer_types()
    specs = []
    for path in sorted(programs):
        _, folder, fn = path.split("/")
        rec = _provenance(fn[:-3], folder, uidmap, prompts)
        res = analyze_program(sources[path])
        cls = res.pop("classification")
        rec.update(res)
        if rec["category"] == "real_world":
            cls = _realworld_classification(rec, cls, rw_types)
        rec["derivation"] = cls.get("derivation", "ast")
        if cls["status"] == "classified":
            _classified_fields(rec, cls["law"], ours, validate)
        else:
            rec["status"] = "unclassifiable"
            rec["reason"] = cls["reason"]
            rec["family"] = rec["params"] = None
        specs.append(rec)
    return specs, ours
