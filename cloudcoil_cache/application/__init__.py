"""Applications: controllers packaged to run, with their manifests (exact RBAC), install and a command line.

::

    app = Application("widgets", controller, leader_election=True, image="example.com/widgets:1")
    # webhooks=AdmissionWebhook(...) adds its server, Service and configurations; extra_rules=[...] the
    # RBAC of what your own code reads or writes beyond the runtime

    if __name__ == "__main__":
        app.main()  # python -m widgets run | manifests | install
"""

from cloudcoil_cache.application._application import Application
from cloudcoil_cache.application._rbac import Need

__all__ = ["Application", "Need"]
