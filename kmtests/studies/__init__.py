"""Studies: simulations that run the tests and the estimators many times.

===================  ==============================================================
module               what it holds
===================  ==============================================================
``power``            power curves of the tests (public path :mod:`kmtests.power`)
``risk``             exact risks of the estimators (public path :mod:`kmtests.risk`)
``groundtruth``      closed-form true kernel means (public path :mod:`kmtests.groundtruth`)
``_checkpoint``      the checkpoint files of the power studies (resume, locks, CRCs)
``_canonical``       the settings of a study as a canonical, JSON-able description
===================  ==============================================================

The package imports none of its modules: :mod:`kmtests.datasets` builds on
``groundtruth`` while ``power`` builds on :mod:`kmtests.datasets`, so each is
imported on its own.
"""
