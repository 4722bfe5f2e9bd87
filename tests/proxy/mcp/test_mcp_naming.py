from __future__ import annotations

from proxy.mcp.naming import StatementNames, statement_names


def test_a_statement_is_named_by_its_most_telling_phrases() -> None:
    assert statement_names("We use Stripe for billing, never PayPal.") == StatementNames(
        "stripe_billing", ("stripe", "billing", "paypal")
    )
    # Everyday words alone ("carry", "payment") are no aliases; rare ones and phrases are.
    assert statement_names("Deploys always run through staging before production.") == (
        StatementNames("deploys_staging", ("deploys", "staging"))
    )


def test_a_statement_of_common_words_only_has_no_names_of_its_own() -> None:
    assert statement_names("We must do it this way.") == StatementNames("", ())
