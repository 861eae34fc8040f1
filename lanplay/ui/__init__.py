"""The full-screen terminal client: a plain `TableModel` (model.py) that back ends feed, screens that
read it (screens.py, with each game's table drawn by its bundle's look, lanplay/games/GAME/look.py), and the
prompt_toolkit application that binds keys to it (app.py).

Below the games (lanplay/games/ builds on them): the words (i18n.py, names.py, describe.py), the values the
model holds (values.py) and the pieces a screen is drawn with (lines.py).

One loop writes the game into the model, `TableFeed` (feed.py), told by either of two sources: `NetTable`
(net_table.py) plays the model's seat through the real protocol (hosting, joining or resuming a table);
`LocalTable` (local_table.py) is the in-process engine against bots (`--offline`, `--plain`).
The lobby (lobby_model.py, lobby_screen.py) lists the tables on the network and opens the table screen.
"""
