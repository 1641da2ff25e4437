"""In-process test doubles without sockets: a fake clock and a scriptable list/watch."""
