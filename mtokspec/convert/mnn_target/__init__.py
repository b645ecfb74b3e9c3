"""``convert --target mnn``: a ``.mtok`` for which MNN's C++ runtime gives Hugging Face's answers.

``from_hf(path, target="mnn")`` builds the exporter's tree, then :func:`.retarget.retarget_conversion`
sets every lever the format has (:mod:`.choices`) and reports, as :class:`~.report.MnnLoss` records
naming a divergence rule with a minimal example (:mod:`.report`), what MNN still does differently
from HF ``tokenizers`` on the probe texts (:mod:`.reference`).  :mod:`.fix` does the same to a file
someone already has; :mod:`.goldens` writes MNN's device-test cases.  Like the exporter
(:mod:`mtokspec.convert.hf`), it reads the parsed folder of :mod:`mtokspec.convert.inputs`; it
imports the exporter's package only where it runs it (:func:`.goldens.reference_for_folder`),
and :mod:`mtokspec.convert.targets` joins the two.
"""
