// The workers page's block and unblock buttons. The admin's token is typed into the page's
// token field and kept in sessionStorage (this tab only, the key every page of the service
// uses); it is sent in the Authorization header, never in a URL. What the service answers
// reaches the page through textContent only.
"use strict";

(function () {
  const TOKEN_KEY = "cecp-runner-token";

  function $(id) { return document.getElementById(id); }

  function token() {
    const input = $("token");
    return (input && input.value.trim()) || sessionStorage.getItem(TOKEN_KEY) || "";
  }

  function say(text, isError) {
    const node = $("w-status");
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

  async function refusal(response) {
    let detail = "";
    try {
      const body = await response.json();
      detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    } catch (e) {
      detail = response.statusText;
    }
    return "Refused (" + response.status + "): " + detail;
  }

  // The row as the service now has it: the blocked cell and the button's next action.
  function show(button, worker) {
    const row = button.closest("tr");
    row.querySelector("td.blocked").textContent = worker.blocked ? "blocked" : "";
    button.dataset.action = worker.blocked ? "unblock" : "block";
    button.textContent = worker.blocked ? "Unblock" : "Block";
  }

  async function act(button) {
    const id = button.dataset.id;
    const action = button.dataset.action === "unblock" ? "unblock" : "block";
    if (!/^[0-9]+$/.test(id)) return;
    const value = token();
    if (!value) {
      say("Enter an admin token first.", true);
      return;
    }
    button.disabled = true;
    try {
      const response = await fetch("/api/workers/" + id + "/" + action, {
        method: "POST", headers: { Authorization: "Bearer " + value },
      });
      if (!response.ok) {
        say(await refusal(response), true);
        return;
      }
      const worker = await response.json();
      show(button, worker);
      say("Worker " + id + (worker.blocked ? " is blocked." : " may work again."), false);
    } catch (e) {
      say("The service did not answer: " + e, true);
    } finally {
      button.disabled = false;
    }
  }

  function start() {
    const input = $("token");
    if (!input || !$("workers")) return;
    input.value = sessionStorage.getItem(TOKEN_KEY) || "";
    input.addEventListener("change", function () {
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    });
    for (const button of document.querySelectorAll("button.block-worker")) {
      button.addEventListener("click", function () {
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        act(button);
      });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
