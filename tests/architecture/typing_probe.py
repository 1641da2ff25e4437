"""What a user's type checker sees of cloudcoil's verbs: ``test_typing.py`` runs mypy on this file with the
package and checks each ``reveal_type`` (never imported at run time: it only states types)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.resources import get_dynamic_resource, get_model, parse

if TYPE_CHECKING:
    from typing_extensions import reveal_type


def sync_verbs(config: Config, pod: Pod) -> None:
    reveal_type(Pod.get("a"))  # get
    reveal_type(Pod.list())  # list
    reveal_type(Pod.list(index=("spec.nodeName", "node-1")))  # list_by_index
    reveal_type(pod.save())  # save
    reveal_type(pod.create())  # create
    reveal_type(Pod.get("a").metadata)  # metadata
    reveal_type(parse({"apiVersion": "v1", "kind": "Pod"}))  # parse
    reveal_type(parse([{"apiVersion": "v1", "kind": "Pod"}]))  # parse_list
    reveal_type(get_model("Pod"))  # get_model
    reveal_type(config.client_for(Pod))  # client_for
    reveal_type(config.client_for(Pod, sync=False))  # client_for_async
    reveal_type(config.client_for(Pod).get("a"))  # api_get
    reveal_type(Pod.from_file("pod.yaml"))  # from_file
    reveal_type(Pod.delete("a"))  # delete
    reveal_type(pod.remove())  # remove
    reveal_type(pod.scale(2))  # scale
    reveal_type(pod.wait_for(lambda event, obj: True))  # wait_for
    reveal_type(pod.wait_for({"ready": lambda event, obj: True}))  # wait_for_named
    reveal_type(Pod.delete_all())  # delete_all
    reveal_type(next(iter(Pod.watch())))  # watch_event
    reveal_type(Pod(metadata={"name": "a"}))  # construct
    reveal_type(get_dynamic_resource("Widget", "example.com/v1").get("w"))  # dynamic_get


async def async_verbs(config: Config, pod: Pod) -> None:
    reveal_type(await Pod.async_get("a"))  # async_get
    reveal_type(await Pod.async_list())  # async_list
    reveal_type(await Pod.async_list(index=("spec.nodeName", "node-1")))  # async_list_by_index
    reveal_type(await pod.async_save())  # async_save
    reveal_type(await (await config.async_client_for(Pod)).get("a"))  # async_client_for
    reveal_type(await Pod.async_delete("a"))  # async_delete
    async for event in Pod.async_watch():
        reveal_type(event)  # async_watch_event
