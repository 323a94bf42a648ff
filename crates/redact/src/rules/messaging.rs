//! Chat, messaging and e-mail services.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "slack_token",
        pattern: r"xox(?:[abposer]|e\.xox[bp])-[0-9A-Za-z\-]{10,250}",
        keywords: &["xox"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "slack_app_token",
        pattern: r"(?i-u)xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Z0-9]+",
        keywords: &["xapp-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "slack_webhook",
        pattern: r"hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,120})",
        keywords: &["hooks.slack.com"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "discord_webhook",
        pattern: r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/([0-9]{17,20}/[A-Za-z0-9_\-]{60,68})",
        keywords: &["discord"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "discord_bot_token",
        pattern: r"(?-u:\b)([MNO][A-Za-z0-9_\-]{23,27})\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        keywords: &[],
        check: Check::Discord,
        reach: Reach::Line,
    },
    Spec {
        kind: "telegram_bot_token",
        pattern: r"[0-9]{5,16}:AA[A-Za-z0-9_\-]{33}",
        keywords: &[":AA"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "twilio_api_key",
        pattern: r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)",
        keywords: &["SK"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "sendgrid_api_key",
        pattern: r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        keywords: &["SG."],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "mailgun_api_key",
        pattern: r#"(?i-u)(?-u:\b)key-[0-9a-f]{32}(?-u:\b)|mailgun[a-z0-9_.\-]{0,30}(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?-u:\b)"#,
        keywords: &["key-", "mailgun"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "mailchimp_api_key",
        pattern: r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
        keywords: &["-us"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "brevo_api_key",
        pattern: r"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}(?-u:\b)",
        keywords: &["xkeysib-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_slack_bot_token: "slack_token" => (
            "slack ", format!("{}{}-{}-{}", concat!("xo", "xb-"), rnd(50, 12, DIGITS), rnd(51, 13, DIGITS), rnd(52, 24, ALNUM)), " end"
        );
        redacts_slack_app_token: "slack_app_token" => (
            "slack ", format!("{}A{}-{}-{}", concat!("xa", "pp-1-"), rnd(53, 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(54, 13, DIGITS), rnd(55, 64, HEX)), " end"
        );
        redacts_slack_webhook_path: "slack_webhook" => (
            "https://hooks.slack.com/", format!("services/T{}/B{}/{}", rnd(56, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(57, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(58, 24, ALNUM)), " end"
        );
        redacts_discord_webhook_path: "discord_webhook" => (
            "https://discord.com/api/webhooks/", format!("{}/{}", rnd(59, 18, DIGITS), rnd(60, 68, URLSAFE)), " end"
        );
        redacts_discord_bot_token: "discord_bot_token" => (
            "DISCORD ", discord_token(), " end"
        );
        redacts_telegram_bot_token_in_api_url: "telegram_bot_token" => (
            "https://api.telegram.org/bot", format!("{}{}{}", rnd(61, 10, DIGITS), concat!(":A", "A"), rnd(62, 33, URLSAFE)), "/sendMessage"
        );
        redacts_twilio_api_key: "twilio_api_key" => (
            "twilio ", format!("{}{}", concat!("S", "K"), rnd(63, 32, HEX)), " end"
        );
        redacts_sendgrid_api_key: "sendgrid_api_key" => (
            "sg ", format!("{}{}.{}", concat!("S", "G."), rnd(64, 22, URLSAFE), rnd(65, 43, URLSAFE)), " end"
        );
        redacts_mailgun_api_key: "mailgun_api_key" => (
            "mg ", format!("{}{}", concat!("ke", "y-"), rnd(66, 32, HEX)), " end"
        );
        redacts_mailchimp_api_key: "mailchimp_api_key" => (
            "mc ", format!("{}{}", rnd(67, 32, HEX), concat!("-u", "s14")), " end"
        );
        redacts_brevo_api_key: "brevo_api_key" => (
            "brevo ", format!("{}{}-{}", concat!("xkey", "sib-"), rnd(68, 64, HEX), rnd(69, 16, ALNUM)), " end"
        );
    }
}
