"""Applications: controllers packaged to run, with their manifests (exact RBAC), install and a command line.

::

    app = Application("widgets", controller, leader_election=True, image="example.com/widgets:1")

    if __name__ == "__main__":
        app.main()  # python -m widgets run | manifests | install
"""

from cloudcoil_cache.application._application import Application
from cloudcoil_cache.application._rbac import Need

__all__ = ["Application", "Need"]
