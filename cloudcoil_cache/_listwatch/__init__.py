"""The list/watch protocol: request paths and options, LIST pages, and the watch event decoder."""

from cloudcoil_cache._listwatch._decode import WatchEvent, decode_event
from cloudcoil_cache._listwatch._listwatch import ListPage, ListWatch, ParsedPage, WatchStream
from cloudcoil_cache._listwatch._request import (
    DeleteOptions,
    ListOptions,
    WatchOptions,
    check_path_segment,
    collection_path,
    list_params,
    object_path,
    watch_params,
)
from cloudcoil_cache._listwatch._selectors import (
    FieldSelector,
    LabelSelector,
    check_field_selector,
    parse_field_selector,
    parse_label_selector,
    undecided_field_paths,
)

__all__ = [
    "FieldSelector",
    "check_field_selector",
    "check_path_segment",
    "LabelSelector",
    "DeleteOptions",
    "ListOptions",
    "WatchOptions",
    "ListPage",
    "ListWatch",
    "ParsedPage",
    "WatchEvent",
    "WatchStream",
    "collection_path",
    "decode_event",
    "list_params",
    "object_path",
    "parse_field_selector",
    "parse_label_selector",
    "undecided_field_paths",
    "watch_params",
]
