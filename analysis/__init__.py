"""vswap-bench analysis: campaign directories -> tidy data, tables, statistics, plots and a report.

Entry points (run from the repo root with /usr/bin/python3):
    /usr/bin/python3 -m analysis report results/<campaign>
    /usr/bin/python3 -m analysis gate results/<campaign> [--history DB]
    /usr/bin/python3 -m analysis compare BASE NEW
    /usr/bin/python3 -m analysis compare CAMPAIGN --kernels baseline vswap
    /usr/bin/python3 -m analysis compare CAMPAIGN --last-accepted
    /usr/bin/python3 -m analysis history [--metric NAME] [--gates N] [--accept CAMPAIGN]
"""
