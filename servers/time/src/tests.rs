//! What a client sees of the server, through the in-process client, and the conversions on
//! fixed instants (clock changes happen on known dates, not today).

use jiff::Timestamp;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};

use crate::tools::{self, TimeResult};
use crate::zones;

async fn client() -> Client {
    zones::set_local("Europe/Paris".to_owned());
    match Client::connect(crate::server()).await {
        Ok(client) => client,
        Err(error) => panic!("the server did not start: {error}"),
    }
}

fn text(result: &mcp_runtime::CallToolResult) -> String {
    result.text()
}

#[tokio::test]
async fn lists_the_two_tools_with_the_local_zone_in_their_descriptions() {
    let client = client().await;
    let tools = client.list_tools().await.expect("tools/list");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    assert_eq!(tools.len(), 2);

    let current = tool("get_current_time");
    assert_eq!(
        current["description"],
        "Get current time in a specific timezone"
    );
    assert_eq!(current["inputSchema"]["required"], json!(["timezone"]));
    assert_eq!(
        current["inputSchema"]["properties"]["timezone"],
        json!({
            "type": "string",
            "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Europe/Paris' as local timezone if no timezone provided by the user."
        })
    );
    assert_eq!(
        current["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        current["outputSchema"]["required"],
        json!(["timezone", "datetime", "day_of_week", "is_dst"])
    );

    let convert = tool("convert_time");
    assert_eq!(
        convert["inputSchema"]["required"],
        json!(["source_timezone", "time", "target_timezone"])
    );
    let properties = &convert["inputSchema"]["properties"];
    assert!(
        properties["target_timezone"]["description"]
            .as_str()
            .is_some_and(
                |d| d.starts_with("Target IANA timezone name") && d.contains("'Europe/Paris'")
            )
    );
    assert_eq!(
        properties["time"]["description"],
        "Time to convert in 24-hour format (HH:MM)"
    );
    assert_eq!(
        convert["outputSchema"]["required"],
        json!(["source", "target", "time_difference"])
    );
}

#[tokio::test]
async fn current_time_in_a_zone() {
    let client = client().await;
    let before = Timestamp::now();
    let result = client
        .call_tool("get_current_time", json!({"timezone": "Asia/Tokyo"}))
        .await
        .expect("tools/call");
    assert!(!result.is_error, "{}", text(&result));
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    // The text block is the same JSON.
    assert_eq!(
        serde_json::from_str::<Value>(&text(&result)).ok(),
        Some(structured.clone())
    );
    assert_eq!(structured["timezone"], "Asia/Tokyo");
    assert_eq!(structured["is_dst"], false);
    let datetime = structured["datetime"].as_str().expect("datetime");
    assert!(datetime.ends_with("+09:00"), "{datetime}");
    assert_eq!(
        datetime.len(),
        "2025-01-01T00:00:00+09:00".len(),
        "{datetime}"
    );
    let at: Timestamp = datetime.parse().expect("an RFC 3339 time");
    assert!(at.as_second() >= before.as_second() && at.as_second() <= before.as_second() + 5);
    let day = at.to_zoned_datetime(jiff::tz::TimeZone::get("Asia/Tokyo").expect("Tokyo"));
    assert_eq!(structured["day_of_week"], day.strftime("%A").to_string());
}

#[tokio::test]
async fn unknown_zones_are_tool_errors_worded_as_the_originals() {
    let client = client().await;
    for (zone, message) in [
        (
            "Mars/Olympus",
            "Invalid timezone: 'No time zone found with key Mars/Olympus'",
        ),
        (
            "europe/paris",
            "Invalid timezone: 'No time zone found with key europe/paris'",
        ),
        ("", "Missing required argument: timezone"),
        (
            "../../etc/passwd",
            "Invalid timezone: ZoneInfo keys must refer to subdirectories of TZPATH, got: ../../etc/passwd",
        ),
    ] {
        let result = client
            .call_tool("get_current_time", json!({"timezone": zone}))
            .await
            .expect("tools/call");
        assert!(result.is_error, "{zone:?}");
        assert_eq!(
            text(&result),
            format!("Error executing tool get_current_time: {message}")
        );
    }
}

#[tokio::test]
async fn bad_times_are_tool_errors() {
    let client = client().await;
    for time in [
        "25:00", "12:60", "noon", "12:00:00", " 9:00", "9", "-1:30", "",
    ] {
        let result = client
            .call_tool(
                "convert_time",
                json!({"source_timezone": "UTC", "time": time, "target_timezone": "Asia/Tokyo"}),
            )
            .await
            .expect("tools/call");
        assert!(result.is_error, "{time:?}");
        assert_eq!(
            text(&result),
            "Error executing tool convert_time: Invalid time format. Expected HH:MM [24-hour format]"
        );
    }
    // The zones are checked before the time, as there.
    let result = client
        .call_tool(
            "convert_time",
            json!({"source_timezone": "UTC", "time": "99:99", "target_timezone": "Nowhere"}),
        )
        .await
        .expect("tools/call");
    assert_eq!(
        text(&result),
        "Error executing tool convert_time: Invalid timezone: 'No time zone found with key Nowhere'"
    );
}

#[tokio::test]
async fn convert_over_the_wire() {
    let client = client().await;
    let result = client
        .call_tool(
            "convert_time",
            json!({"source_timezone": "UTC", "time": "9:05", "target_timezone": "Asia/Kolkata"}),
        )
        .await
        .expect("tools/call");
    assert!(!result.is_error, "{}", text(&result));
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["time_difference"], "+5.5h");
    let source = structured["source"]["datetime"].as_str().expect("source");
    let target = structured["target"]["datetime"].as_str().expect("target");
    assert!(source.ends_with("T09:05:00+00:00"), "{source}");
    assert!(target.ends_with("T14:35:00+05:30"), "{target}");
}

fn zone(name: &str) -> (String, jiff::tz::TimeZone) {
    (name.to_owned(), zones::lookup(name).expect("a known zone"))
}

fn at(instant: &str) -> Timestamp {
    instant.parse().expect("an instant")
}

fn convert_at(
    now: &str,
    from: &str,
    time: &str,
    to: &str,
) -> Result<tools::TimeConversionResult, String> {
    let clock = tools::parse_clock(time).expect("a valid time");
    tools::convert(zone(from), zone(to), at(now), time, clock)
}

fn time_result(timezone: &str, datetime: &str, day: &str, is_dst: bool) -> TimeResult {
    TimeResult {
        timezone: timezone.to_owned(),
        datetime: datetime.to_owned(),
        day_of_week: day.to_owned(),
        is_dst,
    }
}

#[test]
fn conversion_across_the_date_line_and_a_quarter_hour_offset() {
    let result = convert_at(
        "2025-01-10T12:00:00Z",
        "America/New_York",
        "16:30",
        "Asia/Kathmandu",
    );
    let result = result.expect("converted");
    assert_eq!(
        result.source,
        time_result(
            "America/New_York",
            "2025-01-10T16:30:00-05:00",
            "Friday",
            false
        )
    );
    assert_eq!(
        result.target,
        time_result(
            "Asia/Kathmandu",
            "2025-01-11T03:15:00+05:45",
            "Saturday",
            false
        )
    );
    assert_eq!(result.time_difference, "+10.75h");
}

#[test]
fn daylight_saving_time_and_differences() {
    let summer = convert_at(
        "2025-07-01T12:00:00Z",
        "Europe/London",
        "12:00",
        "America/Los_Angeles",
    )
    .expect("converted");
    assert!(summer.source.is_dst && summer.target.is_dst);
    assert_eq!(summer.time_difference, "-8.0h");
    assert_eq!(summer.target.datetime, "2025-07-01T04:00:00-07:00");

    let same = convert_at("2025-07-01T12:00:00Z", "UTC", "00:00", "Etc/UTC").expect("converted");
    assert_eq!(same.time_difference, "+0.0h");
    let half =
        convert_at("2025-07-01T12:00:00Z", "Asia/Kolkata", "10:00", "UTC").expect("converted");
    assert_eq!(half.time_difference, "-5.5h");
}

#[test]
fn a_time_skipped_by_a_clock_change_is_refused() {
    // New York sprang forward at 02:00 on 2025-03-09.
    let error = convert_at("2025-03-09T12:00:00Z", "America/New_York", "02:30", "UTC");
    assert_eq!(
        error.err().as_deref(),
        Some(
            "Invalid time: 02:30 does not exist in America/New_York on 2025-03-09 (skipped by a clock change)"
        )
    );
}

#[test]
fn a_repeated_time_is_the_first_of_the_two() {
    // New York fell back at 02:00 on 2025-11-02: 01:30 happened twice, first in EDT.
    let result =
        convert_at("2025-11-02T12:00:00Z", "America/New_York", "01:30", "UTC").expect("converted");
    assert_eq!(result.source.datetime, "2025-11-02T01:30:00-04:00");
    assert!(result.source.is_dst);
    assert_eq!(result.target.datetime, "2025-11-02T05:30:00+00:00");
}

#[test]
fn clock_times_as_the_original_reads_them() {
    for (text, hm) in [
        ("09:05", (9, 5)),
        ("9:5", (9, 5)),
        ("0:00", (0, 0)),
        ("23:59", (23, 59)),
    ] {
        let time = tools::parse_clock(text).expect(text);
        assert_eq!((time.hour(), time.minute()), hm, "{text}");
    }
    for text in [
        "24:00", "12:60", "123:00", "12:345", "1a:00", "12:00 ", "+1:00",
    ] {
        assert!(tools::parse_clock(text).is_none(), "{text}");
    }
}
