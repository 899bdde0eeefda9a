// card_envs table: draws what the server sends (the seat's view, already built on the server),
// sends moves with the table's turn number, and steps through watched or saved games.
// Nothing is fetched from anywhere but this server; all text goes through textContent.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

let setup = null;
let tableId = null;
let snap = null; // play mode: the latest snapshot
let frameData = null; // watch / replay mode: the frame shown
let timer = null;
let playing = false;
let stalled = false;

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  let data;
  try {
    data = await response.json();
  } catch (error) {
    data = { detail: response.statusText };
  }
  if (!response.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    throw new ApiError(response.status, `${response.status}: ${detail}`);
  }
  return data;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? (error.message || String(error)) : "";
  box.hidden = !error;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

// -- drawing ----------------------------------------------------------------------------------

function cardElement(item) {
  const slot = el("div", "slot");
  const face = el("div", "card");
  const code = item.c;
  if (code === null) {
    face.classList.add("back");
    face.title = "face-down card";
  } else if (code[0] === "X") {
    face.classList.add("joker");
    if (code === "X2") face.classList.add("red");
    face.append(el("div", "corner", "★"), el("div", "pip", "JOKER"), el("div", "corner low", "★"));
    face.title = `joker ${code}`;
  } else {
    const rank = code.slice(0, -1);
    const suit = code.slice(-1);
    if (suit === "D" || suit === "H") face.classList.add("red");
    const corner = el("div", "corner");
    corner.append(el("div", "", rank), el("div", "", SUITS[suit]));
    const low = corner.cloneNode(true);
    low.classList.add("low");
    face.append(corner, el("div", "pip", SUITS[suit]), low);
    face.title = code;
  }
  face.dataset.card = code === null ? "" : code;
  if (item.h) face.classList.add("hi");
  slot.append(face);
  if (item.t) slot.append(el("div", "tag", item.t));
  return slot;
}

function zoneElement(zone) {
  const box = el("div", "zone");
  box.append(el("div", "zone-label", zone.label));
  const row = el("div", zone.spread === "stack" ? "cards stack" : "cards");
  for (const item of zone.cards) row.append(cardElement(item));
  if (zone.pile > 0) {
    const slot = el("div", "slot");
    const back = el("div", "card back");
    back.append(el("div", "pile-count", String(zone.pile)));
    slot.append(back);
    row.append(slot);
  }
  box.append(row);
  if (zone.note) box.append(el("div", "zone-note", zone.note));
  return box;
}

function seatElement(panel) {
  const box = el("div", "seat");
  box.dataset.seat = String(panel.seat);
  if (panel.to_act) box.classList.add("to-act");
  if (panel.you) box.classList.add("you");
  if (panel.out) box.classList.add("out");
  const head = el("h3", "", panel.name);
  if (panel.to_act) head.append(el("span", "turn", "● to act"));
  if (panel.out) head.append(el("span", "turn", "out"));
  box.append(head);
  const stats = el("div", "stats");
  for (const [label, value] of panel.stats) stats.append(el("span", "", `${label} ${value}`));
  box.append(stats);
  for (const zone of panel.zones) box.append(zoneElement(zone));
  return box;
}

function renderBoard(board, bottomSeat) {
  $("title").textContent = board.title;
  document.title = `${board.title} · card_envs`;
  $("status").textContent = board.status;
  const info = $("info");
  info.replaceChildren();
  for (const [label, value] of board.info) {
    const chip = el("span", "chip");
    chip.append(el("b", "", label), document.createTextNode(String(value)));
    info.append(chip);
  }
  const seats = board.seats.length;
  const others = [];
  for (let k = 1; k < seats; k += 1) others.push(board.seats[(bottomSeat + k) % seats]);
  $("others").replaceChildren(...others.map(seatElement));
  $("mine").replaceChildren(seatElement(board.seats[bottomSeat]));
  $("center").replaceChildren(...board.center.map(zoneElement));
  $("center").hidden = board.center.length === 0;
}

function renderLog(entries, skipped, yourSeat) {
  const log = $("log");
  log.replaceChildren();
  if (skipped) log.append(el("li", "sub", `… ${skipped} earlier entries`));
  for (const entry of entries) {
    let cls = entry.seat === null ? "sub" : "";
    if (entry.seat !== null && entry.seat === yourSeat) cls = "you";
    log.append(el("li", cls, entry.text));
  }
  const aside = log.parentElement;
  aside.scrollTop = aside.scrollHeight;
}

function renderResult(data) {
  const box = $("result");
  box.hidden = !data.result;
  box.textContent = data.result ? `Result: ${data.result.text}` : "";
}

// -- play mode --------------------------------------------------------------------------------

async function startPlay() {
  $("play-controls").hidden = false;
  $("watch-controls").hidden = true;
  $("mode").textContent = "play";
  snap = await api("/api/tables", {});
  tableId = snap.table;
  renderPlay();
}

function renderPlay() {
  clearTimeout(timer);
  renderBoard(snap.board, snap.seat);
  renderLog(snap.log, snap.log_skipped, snap.seat);
  renderResult(snap);
  const moves = $("moves");
  moves.replaceChildren();
  if (snap.you_act) {
    for (const move of snap.legal) {
      const button = el("button", "move", move.name);
      button.dataset.action = String(move.action);
      button.addEventListener("click", () => sendMove(move.action));
      moves.append(button);
    }
  } else if (snap.waiting_for !== null) {
    moves.append(el("span", "thinking", `${snap.names[snap.waiting_for]} is thinking…`));
    if (!stalled) scheduleAdvance();
  }
  document.body.dataset.phase = snap.over ? "over" : (snap.you_act ? "act" : "wait");
  document.body.dataset.turn = String(snap.turn);
  $("download").hidden = !snap.over;
}

async function refresh() {
  try {
    snap = await api(`/api/tables/${tableId}`);
    renderPlay();
  } catch (error) {
    showError(error);
  }
}

async function post(path, body) {
  document.body.dataset.phase = "busy";
  for (const button of document.querySelectorAll("#moves button")) button.disabled = true;
  try {
    snap = await api(path, body);
    showError(null);
  } catch (error) {
    showError(error);
    await refresh();
    return;
  }
  renderPlay();
}

function sendMove(action) {
  return post(`/api/tables/${tableId}/move`, { turn: snap.turn, action });
}

function newDeal(deal) {
  stalled = false;
  return post(`/api/tables/${tableId}/new`, { turn: snap.turn, deal });
}

function scheduleAdvance() {
  const turn = snap.turn;
  timer = setTimeout(async () => {
    try {
      snap = await api(`/api/tables/${tableId}/advance`, { turn });
      showError(null);
    } catch (error) {
      if (error.status !== 409) {
        stalled = true; // an agent failed: show it, do not hammer the server
        showError(error);
      }
      await refresh();
      return;
    }
    renderPlay();
  }, snap.delay_ms);
}

// -- watch and replay mode ---------------------------------------------------------------------

function perspective() {
  return $("perspective").value;
}

function startWatch(created) {
  clearTimeout(timer);
  playing = false;
  $("play-controls").hidden = true;
  $("watch-controls").hidden = false;
  $("mode").textContent = created.mode === "replay" ? "replay of a saved game" : "watching agents";
  const select = $("perspective");
  select.replaceChildren(el("option", "", "all hands"));
  select.firstChild.value = "all";
  created.names.forEach((_name, seat) => {
    const option = el("option", "", `player_${seat}'s view only`);
    option.value = String(seat);
    select.append(option);
  });
  tableId = created.table;
  frameData = created;
  renderFrame();
}

async function loadFrame(k) {
  try {
    frameData = await api(`/api/tables/${tableId}/frames/${k}?view=${encodeURIComponent(perspective())}`);
    showError(null);
  } catch (error) {
    showError(error);
    pause();
    return false;
  }
  renderFrame();
  return true;
}

function renderFrame() {
  const view = perspective();
  const bottom = view === "all" ? 0 : Number(view);
  renderBoard(frameData.board, bottom);
  renderLog(frameData.log, frameData.log_skipped, view === "all" ? null : bottom);
  renderResult(frameData);
  const moves = $("moves");
  moves.replaceChildren();
  if (frameData.next_move) moves.append(el("span", "thinking", `next: ${frameData.next_move}`));
  const end = frameData.final_frame;
  $("frame-counter").textContent = `decision ${frameData.frame}` + (end === null ? "" : ` of ${end}`);
  $("back").disabled = $("first").disabled = frameData.frame === 0;
  $("step").disabled = frameData.over;
  document.body.dataset.phase = frameData.over ? "over" : "watch";
  document.body.dataset.frame = String(frameData.frame);
  $("download").hidden = end === null;
}

function pause() {
  playing = false;
  clearTimeout(timer);
  $("play-pause").textContent = "▶ play";
}

async function tick() {
  if (!playing) return;
  if (frameData.over) {
    pause();
    return;
  }
  if (await loadFrame(frameData.frame + 1) && playing) timer = setTimeout(tick, Number($("speed").value));
}

function togglePlay() {
  if (playing) {
    pause();
    return;
  }
  playing = true;
  $("play-pause").textContent = "⏸ pause";
  tick();
}

// -- saved games ---------------------------------------------------------------------------------

// Saved games travel as raw text, never through JSON.parse: seeds are 64-bit integers, which a
// JavaScript number would round.
async function openSaved(file) {
  const text = await file.text();
  try {
    JSON.parse(text);
  } catch (error) {
    showError(new Error(`${file.name} is not JSON: ${error.message}`));
    return;
  }
  try {
    const response = await fetch("/api/replays", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: text,
    });
    const data = await response.json();
    if (!response.ok) throw new ApiError(response.status, `${response.status}: ${data.detail}`);
    startWatch(data);
    showError(null);
  } catch (error) {
    showError(error);
  }
}

async function download() {
  try {
    const response = await fetch(`/api/tables/${tableId}/saved`);
    const text = await response.text();
    if (!response.ok) throw new ApiError(response.status, `${response.status}: ${text}`);
    const blob = new Blob([text], { type: "application/json" });
    const link = el("a");
    link.href = URL.createObjectURL(blob);
    link.download = `${frameData ? frameData.game : snap.game}-game.json`;
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) {
    showError(error);
  }
}

// -- start ----------------------------------------------------------------------------------------

function wire() {
  $("new-game").addEventListener("click", () => newDeal("new"));
  $("same-deal").addEventListener("click", () => newDeal("same"));
  $("swap-seats").addEventListener("click", () => newDeal("swap"));
  $("play-pause").addEventListener("click", togglePlay);
  $("step").addEventListener("click", () => { pause(); loadFrame(frameData.frame + 1); });
  $("back").addEventListener("click", () => { pause(); loadFrame(Math.max(0, frameData.frame - 1)); });
  $("first").addEventListener("click", () => { pause(); loadFrame(0); });
  $("perspective").addEventListener("change", () => loadFrame(frameData.frame));
  $("open-saved").addEventListener("change", (event) => {
    if (event.target.files.length) openSaved(event.target.files[0]);
    event.target.value = "";
  });
  $("download").addEventListener("click", download);
}

async function main() {
  wire();
  try {
    setup = await api("/api/setup");
    if (setup.mode === "play") {
      await startPlay();
    } else {
      startWatch(await api("/api/tables", {}));
    }
  } catch (error) {
    showError(error);
  }
}

main();
