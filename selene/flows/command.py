"""A command's flow run, made from a deployment of its flow so that the dashboard can cancel it.

Prefect's dashboard offers Cancel only on flow runs that belong to a deployment (both UIs test the
run's ``deployment_id``); a flow called as a function makes a run without one. So a command's
top-level flow (a stage's, the pipeline's, an ablation's, a study's) is started as Prefect's own
runner would start it: `call` registers the flow's deployment `DEPLOYMENT` (``<flow>/selene-command``:
no work pool, no schedule, nothing polls it), creates the run from it in PENDING (no worker or
``selene deploy`` picks up a run that is not SCHEDULED) and runs the flow here, in this process,
against that run (`prefect.flow_engine.run_flow`), with the parameters as Python objects. The
server records the same parameters as for a called flow (`Flow.serialize_parameters`).

The run's Cancel then reaches `selene.flows.live.CancelWatch` as before (the run's state becomes
CANCELLING) and stops the stage as Ctrl-C does. Inside another flow (the pipeline's stages, an
ablation's, the flows of ``selene deploy``'s deployments) the run is made the same way as a sub-flow
run of the run that called it, so each stage's run has its own Cancel too.
"""

from __future__ import annotations

import sys
from typing import Any

DEPLOYMENT = "selene-command"
"""The name of each flow's deployment that commands' runs come from (``train/selene-command``,
``selene-pipeline/selene-command`` ...). `selene deploy` names its deployments after the pipeline
config and refuses a config of this name: the two would be one deployment."""

DESCRIPTION = (
    "The flow runs of `selene` commands started from the command line (made from this deployment so "
    "that the dashboard can cancel them). Nothing runs it on its own: start runs with the command, "
    "or serve the pipeline with `selene deploy`."
)


def call(fl: Any, parameters: dict[str, Any]) -> Any:
    """`fl(**parameters)` as a run of the flow's deployment (inside a flow run: a sub-flow run of it)."""
    import httpx
    from prefect.context import FlowRunContext
    from prefect.flow_engine import run_flow

    try:
        flow_run = create_run(fl, parameters, FlowRunContext.get())
    except httpx.HTTPStatusError as e:
        if e.response.status_code >= 500:  # a server losing its footing: `Runtime.on_prefect`'s case
            raise
        # a server that refuses deployments (an API key without the right, another server
        # version): the run goes on as a called flow, which the dashboard cannot cancel
        print(f"the dashboard's Cancel is not offered for this run: {e.response.status_code} from the server when "
              f"making it from deployment {fl.name}/{DEPLOYMENT}; Ctrl-C stops it", file=sys.stderr)  # fmt: skip
        return fl(**parameters)
    # Prefect watches a deployment's run for a Suspend on a websocket of its own, and waits for it
    # to connect without a bound: a stuck server would hold the command there, and the watch costs
    # about 0.2 s a run. A command's run has nothing to resume it after a Suspend, so the engine is
    # handed the run without its deployment; it reads the whole run back as the flow starts.
    return run_flow(fl, flow_run=flow_run.model_copy(update={"deployment_id": None}), parameters=parameters)


def create_run(fl: Any, parameters: dict[str, Any], parent: Any = None) -> Any:
    """A PENDING flow run of `fl`'s deployment `DEPLOYMENT`, named as the flow names its runs. The
    deployment is registered each time (an upsert): one that was deleted in the dashboard comes back.
    Inside the flow run context `parent`, a sub-flow run of it, tied to the parent as Prefect ties a
    called sub-flow (a task run of the parent's that stands for it; the server keeps its state)."""
    from prefect import Task
    from prefect._internal.engine import resolve_custom_flow_run_name
    from prefect.client.orchestration import get_client
    from prefect.context import TagsContext
    from prefect.states import Pending
    from prefect.utilities.asyncutils import run_coro_as_sync

    name = resolve_custom_flow_run_name(fl, parameters) if fl.flow_run_name else None
    parent_task_run = None
    if parent is not None:
        tracking: Task[..., Any] = Task(name=fl.name, fn=fl.fn, version=fl.version)
        tracking._is_subflow_tracking_task = True  # type: ignore[attr-defined]
        parent_task_run = run_coro_as_sync(
            tracking.create_run(flow_run_context=parent, parameters=parameters)
        )
    with get_client(sync_client=True) as client:
        flow_id = client.create_flow(fl)
        deployment = client.create_deployment(
            flow_id=flow_id, name=DEPLOYMENT, description=DESCRIPTION, tags=["selene"]
        )
        return client.create_flow_run_from_deployment(
            deployment,
            parameters=fl.serialize_parameters(parameters),
            state=Pending(),
            name=name,
            parent_task_run_id=getattr(parent_task_run, "id", None),
            tags=TagsContext.get().current_tags,
        )
