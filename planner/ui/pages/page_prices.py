"""st.navigation page script: draws planner.ui.prices_page."""

from planner.ui import prices_page

prices_page.render()
