"""st.navigation page script: draws planner.ui.scaling_page."""

from planner.ui import scaling_page

scaling_page.render()
