"""Results turned into a ledger and trusted: collect (the ledger's single writer), verify, merge, evidence and
the report. They read what the counting flow wrote (results, solutions, claims) and never count: a
verification's re-counts are ordinary tasks (``permenum task``) of the verification's own run directory."""
