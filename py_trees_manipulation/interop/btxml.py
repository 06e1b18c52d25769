"""BehaviorTree.CPP v4 (Groot2) XML import and export.

Import (:func:`load_task_from_xml`, :func:`xml_tree_document`) turns a ``<root BTCPP_format="4">``
file into the YAML form of a tree, with every node located at its XML ``FILE:LINE:COL``, and
hands it to the YAML loader (:func:`~py_trees_manipulation.trees.loader.load_task_data`), so an
XML tree is validated by exactly the same rules and reports problems the same way. Export
(:func:`export_xml`) writes a validated :class:`~py_trees_manipulation.trees.spec.TaskSpec` as one
``<BehaviorTree>`` plus a ``<TreeNodesModel>`` that declares our node types and their ports for
Groot2.

Mapping (BT.CPP <-> task file; semantics from the BT.CPP 4 sources, see the notes):

==============================================  =====================================================
BT.CPP                                          task file
==============================================  =====================================================
``Sequence``                                    ``Sequence`` memory=true (resumes the RUNNING child,
                                                restarts after FAILURE: py_trees' memory sequence)
``ReactiveSequence``                            ``Sequence`` memory=false
``Fallback``                                    ``Selector`` memory=true
``ReactiveFallback``                            ``Selector`` memory=false
``Parallel`` success_count=-1, failure_count=1  ``Parallel`` policy=success_on_all (synchronise=true:
                                                BT.CPP skips finished children too)
``Parallel`` success_count=1, failure_count=1   ``Parallel`` policy=success_on_one
``Inverter``                                    ``Inverter``
``ForceSuccess`` / ``ForceFailure``             ``FailureIsSuccess`` / ``SuccessIsFailure``
``KeepRunningUntilFailure``                     ``SuccessIsRunning``
``RetryUntilSuccessful`` num_attempts=N         ``Retry`` num_failures=N (py_trees re-ticks the child
                                                on the next tick, BT.CPP in the same tick)
``Repeat`` num_cycles=N                         ``Repeat`` num_success=N (-1: forever)
``Timeout`` msec=M                              ``Timeout`` duration_s=M/1000 (ours counts backend time)
``RunOnce`` then_skip=false                     ``OneShot`` policy=on_completion
``AlwaysSuccess`` / ``AlwaysFailure``           ``Success`` / ``Failure``
``Sleep`` msec=M (import only)                  ``Wait`` duration_s=M/1000
``SetBlackboard`` (import only)                 ``SetBlackboardVariable``
``SubTree ID= name= port="{outer}"``            the template inlined: names get ``NAME/``, ports remap
                                                ``{inner}`` keys, literals become values, other keys
                                                get the subtree's scope ``{NAME/key}``; ``_autoremap``,
                                                ``{=}`` and ``{@key}`` (root blackboard) as in BT.CPP;
                                                export: a named ``include:`` (see :func:`export_xml`)
our other behaviours and decorators             custom nodes of the same name, declared in
                                                ``<TreeNodesModel>`` (our ``Condition`` decorator is
                                                written ``<Decorator ID="Condition">``, since
                                                ``<Condition>`` is BT.CPP's explicit-form tag)
==============================================  =====================================================

Refused with a :class:`~py_trees_manipulation.located.errors.TreeLoadError` naming the element and
its line, because py_trees has no equivalent: ``SequenceWithMemory`` (does not restart after a
FAILURE), ``AsyncSequence``/``AsyncFallback`` (yield between children), ``ParallelAll`` and other
Parallel thresholds, ``IfThenElse``, ``WhileDoElse``, ``TryCatch``, ``Switch2..6``, ``Delay``,
``Precondition``, ``Loop*``, ``SkipUnlessUpdated``, ``WaitValueUpdate``, ``Script``,
``ScriptCondition``, ``UnsetBlackboard``, ``WasEntryUpdated``, ``TestNode``, ``RunOnce
then_skip=true`` (SKIPPED), ``RetryUntilSuccessful num_attempts=-1`` and the pre/post-condition
attributes ``_skipIf`` ``_failureIf`` ``_successIf`` ``_while`` ``_onSuccess`` ``_onFailure``
``_onHalted`` ``_post``. Export refuses ``Parallel`` success_on_selected and success_on_all with
synchronise=false, and a Timeout that is not a whole number of milliseconds.

Port values: XML attributes are text. ``{key}`` is a blackboard pointer (output keys, the ``key``
parameters, are written ``{key}`` too, as BT.CPP output ports are). Numbers and booleans are
written as BT.CPP writes them (``0.15``, ``true``). Poses and lists are **inline JSON** (which is
also YAML): ``target='{"position": [0.5, 0, 0.7], "orientation": [1, 0, 0, 0]}'`` (quaternion
w, x, y, z), ``delta="[0, 0, 0.15]"``; on import BT.CPP's ``0;0;0.15`` list syntax and YAML
flow style (``{position: [0.5, 0, 0.7]}``) are accepted as well. Values are written in the
parameter's unit (metres, seconds, newtons...), defaults are omitted, and a ``"${name}"``
substitution is kept for the ``--scene`` task file's parameters to fill.

py_trees' own parser (:mod:`py_trees.parsers.behaviour_tree_xml`, py_trees 2.5+): we reuse its
``{key}`` syntax check (``is_key``) and its ``<Import src>``/``<Include file>`` path resolution
(``_resolve_import_path``), and accept its dialect (``memory=`` on Sequence/Fallback/Selector,
``<Selector>``, ``<Parallel policy=...>``). We go beyond it because it builds py_trees objects
from ``PortsMixin`` leaves, has no locations in its errors and is "not semantically BT.CPP": here
every problem names ``FILE:LINE:COL``; leaves are our registered behaviours with typed, unit-aware
parameters; the BT.CPP v4 names and semantics above are mapped (ReactiveSequence,
RetryUntilSuccessful, ForceSuccess...); ``_autoremap``, ``{=}`` and ``{@key}`` are handled; and
trees are also exported. DTDs and entities are refused (no entity expansion), and files are
limited to ``locyaml.MAX_FILE_BYTES``, ``MAX_DEPTH`` levels and ``loader.MAX_NODES`` nodes.

Modules (issue 37 item 6): :mod:`.btxml_common` (the BT.CPP vocabulary and XML with locations, shared
by both directions), :mod:`.btxml_import` (XML to the YAML node form and a task),
:mod:`.btxml_export` (a tree to XML with its ``<TreeNodesModel>``), :mod:`.btxml_yaml` (a tree
back to YAML, tree differences); this module keeps :func:`btcpp_check` and re-exports their names.
"""

from __future__ import annotations

from typing import Any

from .btxml_common import (_BTCPP_TO_DECORATOR, _DECORATOR_TO_BTCPP, _EXPLICIT, POINTER,  # noqa: F401  (re-exports)
                           PRE_POST_CONDITIONS, UNSUPPORTED, XmlElement, parse_xml, read_xml)
from .btxml_export import (custom_node_types, export_xml, tree_id, tree_nodes_model,  # noqa: F401  (re-exports)
                           value_to_text)
from .btxml_import import (KNOWN_TAGS, REQUIRED_INT, load_task_from_xml, load_tree_from_xml,  # noqa: F401  (re-exports)
                           text_to_value, xml_tree_document)
from .btxml_yaml import (TASK_SECTIONS, node_to_yaml, rebase_urdf_paths, task_to_yaml,  # noqa: F401  (re-exports)
                         tree_differences)


# ------------------------------------------------------------------------------------------------
# checking exported files with BehaviorTree.CPP itself
def btcpp_check(xml_text: str) -> Any:
    """Load ``xml_text`` with BehaviorTree.CPP's own XML parser (the ``behaviortreepy`` package).

    Every node type declared in the file's ``<TreeNodesModel>`` is registered in a
    ``BehaviorTreeFactory`` (Action/Condition/Decorator by its model category) and the tree is
    created with ``create_tree_from_text``: BT.CPP then checks the file structure, node types,
    child counts, BehaviorTree/SubTree IDs and the built-in nodes' ports (names and literal values,
    e.g. ``Timeout msec``, ``Parallel success_count``, ``RunOnce then_skip``).

    behaviortreepy 0.1.x registers Python nodes without ports, so BT.CPP would reject every port
    attribute of our custom nodes; those attributes are first checked here against the model's
    declared ports, with BT.CPP's own rule (a port attribute that is not a declared port is an
    error; names starting with ``_`` and ``name`` are not ports), then removed before BT.CPP sees
    the file.

    Returns:
        the created ``behaviortreepy.Tree``.

    Raises:
        ValueError: an attribute that is not a declared port, or BT.CPP's error text.
        ImportError: behaviortreepy is not installed.
    """
    import xml.etree.ElementTree as ET

    import behaviortreepy as bt

    root = ET.fromstring(xml_text)
    models: dict[str, tuple[str, set[str]]] = {}
    for model in root.findall("TreeNodesModel"):
        for n in model:
            ports = {p.attrib["name"] for p in n if p.tag in ("input_port", "output_port", "inout_port")}
            models[n.attrib["ID"]] = (n.tag, ports)
    for tree in root.findall("BehaviorTree"):
        for el in tree.iter():
            node_id = el.attrib.get("ID") if el.tag in _EXPLICIT else el.tag
            if node_id not in models:
                continue
            for a in list(el.attrib):
                if a in ("name", "ID") or a.startswith("_"):
                    continue
                if a not in models[node_id][1]:
                    raise ValueError(f"a port with name [{a}] is found in the XML (<{el.tag}>) but not in the "
                                     f"<TreeNodesModel> ports of {node_id}")
                del el.attrib[a]
    factory = bt.BehaviorTreeFactory()
    for node_id, (category, _) in models.items():
        register = {"Action": factory.register_simple_action, "Condition": factory.register_simple_condition,
                    "Decorator": factory.register_simple_decorator}.get(category)
        if register is None:
            raise ValueError(f"<TreeNodesModel> category {category!r} of {node_id} cannot be registered")
        register(node_id, lambda *a: bt.NodeStatus.SUCCESS)
    try:
        return factory.create_tree_from_text(ET.tostring(root, encoding="unicode"))
    except RuntimeError as e:
        raise ValueError(str(e)) from None
