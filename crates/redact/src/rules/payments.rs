//! Payments and commerce.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "stripe_secret_key",
        pattern: r"(?-u:\b)[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,247}",
        keywords: &[
            "sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_",
        ],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "stripe_webhook_secret",
        pattern: r"(?-u:\b)whsec_[A-Za-z0-9+/=]{32,}",
        keywords: &["whsec_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "shopify_token",
        pattern: r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?-u:\b)",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "square_token",
        pattern: r"(?-u:\b)(?:EAAA[A-Za-z0-9_\-]{60}|sq0atp-[0-9A-Za-z_\-]{22}|sq0csp-[0-9A-Za-z_\-]{43})",
        keywords: &["EAAA", "sq0atp-", "sq0csp-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_stripe_secret_key: "stripe_secret_key" => (
            "Stripe.api_key = '", format!("{}{}", concat!("sk_l", "ive_"), rnd(70, 99, ALNUM)), "'"
        );
        redacts_stripe_webhook_secret: "stripe_webhook_secret" => (
            "wh ", format!("{}{}", concat!("wh", "sec_"), rnd(71, 32, ALNUM)), " end"
        );
        redacts_shopify_token: "shopify_token" => (
            "shop ", format!("{}{}", concat!("shp", "at_"), rnd(72, 32, HEX)), " end"
        );
        redacts_square_token: "square_token" => (
            "sq ", format!("{}{}", concat!("EA", "AA"), rnd(73, 60, URLSAFE)), " end"
        );
    }
}
