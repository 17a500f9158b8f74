"""vswap-bench analysis: campaign directories -> tidy data, tables, statistics, plots and a report.

Entry points (run from the repo root with /usr/bin/python3):
    python3 -m analysis report results/<campaign>
    python3 -m analysis compare BASE NEW | python3 -m analysis compare CAMPAIGN --kernels baseline vswap
    python3 -m analysis compare CAMPAIGN --last-accepted
    python3 -m analysis history [--metric NAME] [--accept CAMPAIGN]
"""
