import streamlit as st
st.title("tradeoff")
